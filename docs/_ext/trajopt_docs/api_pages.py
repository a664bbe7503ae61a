"""One reference page per public module, written into ``docs/api/`` when the build starts.

Each page documents the module with ``automodule`` (members, including the
undocumented ones, which :mod:`.coverage` then reports), lists a package's
re-exports (``package-exports``) and links its submodules. The pages are
written only when their text changes, so an unchanged module is not read
again by an incremental build.
"""
from __future__ import annotations

import importlib
from pathlib import Path

from .packages import public_modules

#: The generated pages' folder, relative to the docs folder (ignored by git).
API_DIR = Path("api") / "generated"


def _page(name: str, children: list[str]) -> str:
    is_package = hasattr(importlib.import_module(name), "__path__")
    lines = [f"``{name}``", "=" * (len(name) + 4), "", f".. automodule:: {name}"]
    if is_package:
        # a package documents what it defines itself; its re-exports are listed below and documented where defined
        lines += ["   :ignore-module-all:", "", ".. rubric:: Exported names", "", f".. package-exports:: {name}"]
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
