"""Writing figures and animations to disk: extension check, overwrite guard.

Every plotting function of :mod:`trajopt.plotting` that takes a ``path``
writes through :func:`save_figure`; the animations check their target with
:func:`prepare_output_path` before rendering any frame.
"""
from __future__ import annotations

from pathlib import Path
from typing import Collection

from matplotlib.figure import Figure

from ..atomic_file import atomic_output

#: Extensions :func:`save_figure` writes (matplotlib picks the format from them).
FIGURE_EXTENSIONS = (".png", ".pdf", ".svg")
#: Resolution of raster output (PNG), dots per inch.
FIGURE_DPI = 150


def prepare_output_path(path: str | Path, overwrite: bool, extensions: Collection[str]) -> Path:
    """Validate an output file name and create its parent directory.

    Raises ``ValueError`` when the extension (case-insensitive) is not in
    ``extensions`` and ``FileExistsError`` when the file exists and
    ``overwrite`` is false. Returns the path as a :class:`~pathlib.Path`.
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix not in extensions:
        raise ValueError(f"path: unknown extension {path.suffix!r} in {str(path)!r}; expected one of {', '.join(extensions)}")
    if path.exists() and not overwrite:
        raise FileExistsError(f"path: {str(path)!r} exists; pass overwrite=True to replace it")
    path.parent.mkdir(parents=True, exist_ok=True)
    return path


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
