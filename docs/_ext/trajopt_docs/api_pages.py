"""One reference page per public module, written into ``docs/api/`` when the build starts.

Each page documents the module with ``automodule`` (members, including the
undocumented ones, which :mod:`.coverage` then reports) and links its
submodules. A package's page lists the names it exports (``package-exports``)
and documents each at its public path (``public-name``: ``trajopt.Problem``,
in full at the canonical path, see :mod:`.public_names`); a module's page
leaves out what the reference documents at a public path, and links there. The pages are
written only when their text changes, so an unchanged module is not read
again by an incremental build.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .packages import definition, listed_names, moved_members, public_modules, public_paths

#: The generated pages' folder, relative to the docs folder (ignored by git).
API_DIR = Path("api") / "generated"


def _page(name: str, children: list[str]) -> str:
    module = importlib.import_module(name)
    is_package = hasattr(module, "__path__")
    paths = public_paths()
    # what this module defines and the reference documents at a public path (trajopt.problem.Problem -> trajopt.Problem)
    moved = moved_members(name)
    lines = [f"``{name}``", "=" * (len(name) + 4), "", f".. automodule:: {name}"]
    if is_package:
        # a package documents what it defines itself; the names it lists are documented below
        lines.append("   :ignore-module-all:")
    if moved:
        lines.append("   :exclude-members: " + ", ".join(sorted(moved)))
    entries = []
    if is_package:
        for member in listed_names(module):
            public = f"{name}.{member}"
            defined = definition(module, member)
            # the names automodule documents here are left to it
            if defined not in paths:
                continue  # also a submodule's name: documented where defined (packages.public_paths)
            if defined != public or paths[defined][0] != public or member.startswith("_"):
                entries.append(public)
    if is_package and any(not member.startswith("_") for member in listed_names(module)):
        lines += ["", ".. rubric:: Exported names", "", f".. package-exports:: {name}", ""]
        lines += [f".. public-name:: {public}" + "\n" for public in entries]
    listed_here = set(entries)
    elsewhere = {member: public for member, public in moved.items() if f"{name}.{member}" not in listed_here}
    if elsewhere:
        lines += ["", ".. rubric:: Documented where users import them", ""]
        lines += [f"- :py:obj:`{member} <{public}>`: ``{public}``" for member, public in elsewhere.items()]
    if children:
        lines += ["", ".. rubric:: Modules", "", ".. toctree::", "   :maxdepth: 1", ""]
        lines += [f"   {child}" for child in children]
    return "\n".join(lines) + "\n"


def write_api_pages(app) -> None:
    """``builder-inited`` handler: (re)write the page of every public module, remove stale ones."""
    folder = Path(app.srcdir) / API_DIR
    folder.mkdir(parents=True, exist_ok=True)
    modules = public_modules()
    wanted = set()
    for name in modules:
        children = [m for m in modules if m.rsplit(".", 1)[0] == name and m != name]
        text = _page(name, children)
        path = folder / f"{name}.rst"
        wanted.add(path)
        if not path.exists() or path.read_text() != text:
            path.write_text(text)
    for stale in set(folder.glob("*.rst")) - wanted:
        stale.unlink()
