"""A sphinx-gallery scraper for the files a tutorial writes: pictures, animations, viewer pages.

The tutorials write their outputs where a user running them would find them,
in the working directory (``solution.plot("trot.png")``, ``--html
trot.html``); sphinx-gallery runs each one in its own folder. After every code
block this scraper moves the new PNG and GIF files there into the gallery's
images, shown under the block, and each HTML page into :data:`PAGES_DIR`,
copied next to the tutorial's built page (``html_extra_path``) and shown
under the block in a frame with a link that opens it alone.

It runs before sphinx-gallery's matplotlib scraper: a block that wrote its
pictures to files (``plot_solution(solution, path="trot.png")``) is shown by
those files, and the figures it left open are closed rather than shown a
second time; a block that wrote none has its open figures shown as usual.
"""
from __future__ import annotations

import shutil
from pathlib import Path

from sphinx_gallery.scrapers import figure_rst

#: Pictures a tutorial writes, shown as images.
IMAGE_SUFFIXES = (".png", ".gif")
#: Where the HTML pages of a gallery ``G`` go (``PAGES_DIR / G``), relative to the docs folder.
PAGES_DIR = Path("_build_pages")

_FRAME = """
.. raw:: html

   <div class="tutorial-page-frame">
   <iframe src="{name}" title="{name}" loading="lazy"></iframe>
   <p><a href="{name}">Open {name} on its own page</a></p>
   </div>
"""


def _new_files(folder: Path, suffixes: tuple[str, ...]) -> list[Path]:
    return sorted(p for p in folder.iterdir() if p.is_file() and p.suffix.lower() in suffixes)


def output_files(block, block_vars, gallery_conf) -> str:
    """Move the pictures and pages the block wrote into the build; return their reST (module docstring)."""
    source = Path(block_vars["src_file"])
    docs = Path(gallery_conf["src_dir"])
    images = []
    for picture in _new_files(source.parent, IMAGE_SUFFIXES):
        target = Path(next(block_vars["image_path_iterator"])).with_suffix(picture.suffix.lower())
        shutil.move(picture, target)
        images.append(target)
    rst = ""
    if images:
        import matplotlib.pyplot as plt

        plt.close("all")
        rst = figure_rst(images, gallery_conf["src_dir"])
    gallery = Path(block_vars["target_file"]).parent.relative_to(docs)
    for page in _new_files(source.parent, (".html",)):
        destination = docs / PAGES_DIR / gallery / page.name
        destination.parent.mkdir(parents=True, exist_ok=True)
        shutil.move(page, destination)
        rst += _FRAME.format(name=page.name)
    return rst
