"""The documentation site (docs/): it builds with no warning, every tutorial page shows the
pictures its run made, every internal link resolves, and Chromium renders the pages; in the
slow set, every tutorial runs in full as a script.

The site is built with the command docs/building_docs.md gives, into docs/_build/html: after
``.ci/run``'s own build (or any earlier one) this is incremental and takes seconds; from
nothing it runs every tutorial (their short versions, ``TRAJOPT_DOCS_QUICK=1``) and takes a
few minutes. Without the ``docs`` extra these tests are skipped, except under CI, which
installs it.
"""
from __future__ import annotations

import importlib.util
import os
import re
import subprocess
import sys
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import numpy as np
import pytest

from .viewer_helpers import screenshot

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"
HTML = DOCS / "_build" / "html"
TUTORIALS = sorted((DOCS / "tutorials").glob("plot_*.py")) + sorted((DOCS / "getting_started").glob("plot_*.py"))
#: The extensions the site needs (the docs extra).
DOCS_MODULES = ("sphinx", "furo", "myst_parser", "sphinx_gallery", "sphinxarg")
#: A desktop browser window (the theme shows its sidebar from 1000 pixels on).
WINDOW = (1200, 900)


def _page(script: Path) -> Path:
    """The built page of a tutorial script."""
    return HTML / f"auto_{script.parent.name}" / f"{script.stem}.html"


@pytest.fixture(scope="module")
def site() -> Path:
    """docs/_build/html, built (or brought up to date) with warnings as errors."""
    missing = [m for m in DOCS_MODULES if importlib.util.find_spec(m) is None]
    if missing:
        if os.environ.get("CI"):
            pytest.fail(f"the docs extra is not installed ({', '.join(missing)}); .ci/run installs it")
        pytest.skip(f"the docs extra is not installed ({', '.join(missing)}): pip install -e '.[docs]'")
    env = {**os.environ, "MPLBACKEND": "Agg", "TRAJOPT_DOCS_QUICK": os.environ.get("TRAJOPT_DOCS_QUICK", "1")}
    build = subprocess.run([sys.executable, "-m", "sphinx", "-W", "-q", "-b", "html", "docs", str(HTML)], cwd=ROOT, env=env, capture_output=True, text=True, timeout=1800)
    assert build.returncode == 0, f"the documentation does not build without warnings:\n{build.stderr[-4000:]}"
    return HTML


def test_every_page_is_built(site):
    for page in ("index", "conventions", "cli", "benchmarks", "building_docs", "api/index", "auto_tutorials/index"):
        assert (site / f"{page}.html").is_file(), page
    for package in ("lie", "models", "trajopt", "problems"):
        assert (site / "api" / "generated" / f"{package}.html").is_file(), package
    cli = (site / "cli.html").read_text()
    for command in ("list", "solve", "view", "verify", "sweep", "mpc"):
        assert f"trajopt {command}" in cli, f"the CLI reference has no {command!r} subcommand"


@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_page_shows_the_pictures_of_its_run(site, script):
    """Each tutorial ran in the build: its page holds its output and the pictures (or viewer pages) it made."""
    text = _page(script).read_text()
    assert "sphx-glr-script-out" in text, "no printed output on the page"
    images = re.findall(r'<img[^>]+src="([^"]*_images/sphx_glr_[^"]+)"', text)
    frames = re.findall(r'<iframe src="([^"]+)"', text)
    assert images or frames, "no picture or page from the tutorial's run on the page"
    for src in images + frames:
        assert (_page(script).parent / src).resolve().is_file(), src


class _Links(HTMLParser):
    """The ``href``/``src`` of a page's elements and the ``id``s it defines."""

    def __init__(self) -> None:
        super().__init__()
        self.links: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        for name, value in attrs:
            if name in ("href", "src") and value:
                self.links.append(value)
            elif name == "id" and value:
                self.ids.add(value)


def _parsed(path: Path, cache: dict) -> _Links:
    if path not in cache:
        parser = _Links()
        parser.feed(path.read_text(errors="replace"))
        cache[path] = parser
    return cache[path]


def test_internal_links_resolve(site):
    """Every relative link of every built page names a file of the site, and an anchor that page defines."""
    cache: dict = {}
    broken = []
    pages = sorted(site.rglob("*.html"))
    sphinx_pages = {p for p in pages if "_static" not in p.parts and "sphinx" in p.read_text(errors="replace")[:3000].lower()}
    for page in sphinx_pages:
        for link in _parsed(page, cache).links:
            parts = urlsplit(link)
            if parts.scheme or link.startswith("//") or link.startswith("data:"):
                continue
            target = (page.parent / unquote(parts.path)).resolve() if parts.path else page
            if not target.exists():
                broken.append(f"{page.relative_to(site)}: {link}")
            elif parts.fragment and target in sphinx_pages and parts.fragment not in _parsed(target, cache).ids:
                broken.append(f"{page.relative_to(site)}: {link} (no such anchor)")
    assert len(sphinx_pages) > 100
    assert not broken, "broken internal links:\n" + "\n".join(broken[:40])


def _text_pixels(shot: np.ndarray) -> float:
    """Fraction of dark (text) pixels."""
    return float((shot.max(axis=2) < 90).mean())


#: Pages whose first screen shows a figure of the build's run: getting started, and the MPC tutorial.
FIGURE_PAGES = ("getting_started/plot_getting_started.py", "tutorials/plot_09_model_predictive_control.py")


@pytest.mark.browser
def test_chromium_renders_the_index_and_a_tutorial(site, tmp_path):
    """Headless Chromium draws the index (title, text, the theme's sidebar), and the getting-started
    page and the MPC tutorial with the figure of their run (matplotlib's line colours) in the window."""
    index = screenshot((site / "index.html").as_uri(), tmp_path / "index.png", budget_ms=2000, window=WINDOW)
    h, w, _ = index.shape
    assert _text_pixels(index[: h // 2, w // 4 :]) > 0.005, "no text drawn on the index page"
    # the sidebar is one shade behind its links: its most frequent colour covers most of the strip, and is not white
    shades, counts = np.unique(index[h // 4 : 3 * h // 4, : w // 8].reshape(-1, 3), axis=0, return_counts=True)
    assert counts.max() / counts.sum() > 0.6, "no sidebar on the left"
    assert np.abs(shades[counts.argmax()].astype(int) - 255).max() > 2, "the sidebar is not shaded (theme not loaded)"
    # matplotlib's default line colours (tab:blue, tab:orange, tab:green) in the figure of the run
    colours = np.array([[31, 119, 180], [255, 127, 14], [44, 160, 44]])
    for script in FIGURE_PAGES:
        page = _page(DOCS / script)
        shot = screenshot(page.as_uri(), tmp_path / f"{page.stem}.png", budget_ms=3000, window=(WINDOW[0], 2 * WINDOW[1]))
        plotted = [(np.abs(shot - c).max(axis=2) < 40).sum() for c in colours]
        assert min(plotted) > 50, f"{page.name}: the figure of the run is not drawn (pixels of its line colours: {plotted})"
        assert _text_pixels(shot) > 0.005, f"{page.name}: no text drawn"
        assert "sphx-glr-script-out" in page.read_text(), f"{page.name}: no printed output of the run"


@pytest.mark.slow
@pytest.mark.parametrize("script", TUTORIALS, ids=lambda p: p.stem)
def test_tutorial_runs_in_full_as_a_script(script, tmp_path):
    """The full version of each tutorial (no TRAJOPT_DOCS_QUICK), as a user runs it: ``python SCRIPT`` in a folder of its own."""
    env = {k: v for k, v in os.environ.items() if k != "TRAJOPT_DOCS_QUICK"}
    env["MPLBACKEND"] = "Agg"
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    run = subprocess.run([sys.executable, str(script)], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=1800)
    assert run.returncode == 0, run.stderr[-4000:]
    assert list(tmp_path.glob("*.png")) or list(tmp_path.glob("*.html")), "the tutorial wrote no picture or viewer page"


def _docs_extension():
    """The documentation's own Sphinx extension (docs/_ext), imported as the build imports it."""
    pytest.importorskip("sphinx")
    sys.path.insert(0, str(DOCS / "_ext"))
    try:
        from trajopt_docs import coverage, packages
    finally:
        sys.path.remove(str(DOCS / "_ext"))
    return coverage, packages


def test_reexports_link_to_their_definitions():
    """``trajopt.solve``, ``lie.so3_exp`` (an alias) and ``trajopt.EULER`` (a constant) point to where they are defined."""
    _, packages = _docs_extension()
    import lie
    import trajopt

    assert packages.definition(trajopt, "solve") == "trajopt.solvers.registry.solve"
    assert packages.definition(lie, "so3_exp") == "lie.so3.exp"
    assert packages.definition(trajopt, "EULER") == "trajopt.integrators.EULER"
    assert "so3_exp" in packages.exports(lie) and "Problem" in packages.exports(trajopt)
    # documented at the shortest public path: trajopt.solve, not trajopt.solvers.solve
    assert packages.public_paths()["trajopt.solvers.registry.solve"] == ("trajopt.solve", "trajopt.solvers.solve")
    assert packages.canonical("trajopt.problem.Problem.add_cost") == "trajopt.Problem.add_cost"
    assert packages.moved_members("trajopt.problem")["Problem"] == "trajopt.Problem"
    import trajopt.plotting

    assert "plot_solution" in packages.exports(trajopt.plotting)  # loaded on first use (PEP 562)


def test_public_names_have_an_entry_at_their_public_path(site):
    """Every public name of ``trajopt``, ``models`` and ``lie`` (their ``__all__``; ``lie``, which has
    none, its re-exports) is in the site's objects.inv at the path users import it by
    (``trajopt.Problem``, ``models.Quadrotor``, ``lie.RBState``), on its package's page; the
    defining name (``trajopt.problem.Problem``) is an alias of that same entry; the page says where
    the object is defined; and a second public path (``trajopt.solvers.solve``) is an entry too."""
    from sphinx.util.inventory import InventoryFile

    _, packages = _docs_extension()
    import importlib

    with open(site / "objects.inv", "rb") as f:
        inventory = InventoryFile.load(f, "", lambda base, uri: uri)
    entries = {name: item for kind, items in inventory.items() if kind.startswith("py:") for name, item in items.items()}
    uri = lambda item: item.uri if hasattr(item, "uri") else item[2]  # noqa: E731 (sphinx < 8.2: a tuple)
    missing, elsewhere, aliases = [], [], []
    for package_name in ("trajopt", "models", "lie"):
        package = importlib.import_module(package_name)
        names = getattr(package, "__all__", None) or packages.listed_names(package)
        for name in names:
            public = f"{package_name}.{name}"
            if public not in entries:
                missing.append(public)
                continue
            if not uri(entries[public]).startswith(f"api/generated/{package_name}.html#"):
                elsewhere.append(f"{public}: {uri(entries[public])}")
            if name in packages.exports(package):
                defined = packages.definition(package, name)
                # (a name a subpackage defines and lists, trajopt.transcription.get_transcription, is its own short entry)
                if defined in entries and defined not in packages.defined_as() and uri(entries[defined]) != uri(entries[public]):
                    aliases.append(f"{defined}: {uri(entries[defined])}")
    assert not missing, f"public names without an entry at their public path: {missing}"
    assert not elsewhere, f"public names documented on another page: {elsewhere}"
    assert not aliases, f"defining names that do not lead to the public entry: {aliases}"
    for public, defined in (("trajopt.Problem", "trajopt.problem.Problem"), ("trajopt.solve", "trajopt.solvers.registry.solve"),
                            ("trajopt.EULER", "trajopt.integrators.EULER"), ("models.Quadrotor", "models.quadrotor.Quadrotor")):
        assert uri(entries[defined]) == uri(entries[public]), defined
    assert uri(entries["trajopt.Problem.add_cost"]).endswith("#trajopt.Problem.add_cost")
    assert uri(entries["lie.RBState"]).endswith("lie.html#lie.RBState")
    assert uri(entries["trajopt.solvers.solve"]).startswith("api/generated/trajopt.solvers.html#")
    page = (site / "api" / "generated" / "trajopt.html").read_text()
    assert 'id="trajopt.Problem"' in page and "Defined in" in page and 'href="trajopt.problem.html#module-trajopt.problem"' in page
    assert 'href="trajopt.html#trajopt.Problem"' in (site / "api" / "generated" / "trajopt.problem.html").read_text()


def test_coverage_check_lists_every_public_object():
    """What the build requires a docstring and a reference entry of: modules, classes, functions, methods, properties;
    not private names, not imported names; the MPC package is in it."""
    coverage, _ = _docs_extension()
    found = {name: kind for kind, name, _ in coverage.public_objects()}
    assert found["trajopt.solvers.registry.solve"] == "function"
    assert found["models.rigid_body.RigidBody"] == "class"
    assert found["models.rigid_body.RigidBody.mass"] == "method"
    assert found["models.legged.LeggedRobot.leg_length"] == "method"  # a property
    assert found["lie.quaternion"] == "module"
    assert "trajopt.Problem" not in found  # imported into trajopt, defined in trajopt.problem
    assert not any(part.startswith("_") for name in found for part in name.split("."))
    assert found["trajopt.mpc.loop.run_closed_loop"] == "function"
    assert found["trajopt.solvers.rti.RtiSolver"] == "class"
