"""Writing figures and animations to disk: extension check, overwrite guard.

Every plotting function of :mod:`trajopt.plotting` that takes a ``path``
writes through :func:`save_figure`; the animations check their target with
:func:`trajopt.atomic_file.prepare_output_path` before rendering any frame.
"""
from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from ..atomic_file import atomic_output, prepare_output_path

if TYPE_CHECKING:  # matplotlib's figure module is imported by the plots themselves
    from matplotlib.figure import Figure

#: Extensions :func:`save_figure` writes (matplotlib picks the format from them).
FIGURE_EXTENSIONS = (".png", ".pdf", ".svg")
#: Extensions the animations write (:mod:`.movie`: GIF, or MP4 through ffmpeg).
ANIMATION_EXTENSIONS = (".gif", ".mp4")
#: Resolution of raster output (PNG), dots per inch.
FIGURE_DPI = 150


def save_figure(fig: Figure, path: str | Path | None, overwrite: bool = False) -> Figure:
    """Write ``fig`` to ``path`` (PNG, PDF or SVG by extension) and return it.

    ``path=None`` writes nothing. An existing file is replaced only with
    ``overwrite=True``; a missing parent directory is created. The figure is
    written to a temporary file renamed at the end (never a partial file).
    """
    if path is not None:
        with atomic_output(prepare_output_path(path, overwrite, FIGURE_EXTENSIONS), overwrite) as tmp:
            fig.savefig(tmp, dpi=FIGURE_DPI)
    return fig
