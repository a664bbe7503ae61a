"""Output files written whole or not at all: a temporary file beside the target, renamed at the end.

:func:`atomic_output` hands the writer a temporary path in the target's folder
(same extension, so writers that pick a format from it still work). When the
writer finishes, the file takes the target's name in one step (``os.replace``
within a folder is atomic); when it fails or is interrupted (Ctrl-C, a full
disk), the temporary file is removed and the target is left as it was, absent
or the previous version. Without ``overwrite`` an existing target is never
replaced, not even one that appears while the writer runs: the last step is a
hard link, which fails when the name exists (a check and a rename where the
filesystem has no hard links). :func:`prepare_output_path` checks a target's
name before anything is written.
"""
from __future__ import annotations

import os
import secrets
from contextlib import contextmanager
from pathlib import Path
from typing import Collection, Iterator, Union


def _publish(tmp: Path, path: Path, overwrite: bool) -> None:
    """Give ``tmp`` the name ``path`` (replacing it only when ``overwrite``)."""
    if overwrite:
        os.replace(tmp, path)
        return
    try:
        os.link(tmp, path)
    except FileExistsError:
        raise FileExistsError(f"path: {os.fspath(path)!r} appeared while it was written; pass overwrite=True to replace it") from None
    except OSError:  # no hard links here (some network and FAT filesystems)
        if path.exists():
            raise FileExistsError(f"path: {os.fspath(path)!r} appeared while it was written; pass overwrite=True to replace it") from None
        os.replace(tmp, path)


@contextmanager
def atomic_output(path: Union[str, os.PathLike], overwrite: bool = False) -> Iterator[Path]:
    """Yield a temporary path in the folder of ``path`` to write; when the block ends without an
    error it is renamed to ``path`` (atomically), otherwise removed, so no partial file is left.

    Raises ``FileNotFoundError`` when the folder of ``path`` does not exist and
    ``FileExistsError`` when ``path`` exists and ``overwrite`` is false, both
    before anything is written. The file gets the usual permissions (umask).
    """
    path = Path(path)
    if not path.parent.is_dir():
        raise FileNotFoundError(f"path: the folder {os.fspath(path.parent)!r} of {os.fspath(path)!r} does not exist")
    if path.exists() and not overwrite:
        raise FileExistsError(f"path: {os.fspath(path)!r} exists; pass overwrite=True to replace it")
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(4)}.partial{path.suffix}")
    os.close(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield tmp
        _publish(tmp, path, overwrite)
    finally:
        tmp.unlink(missing_ok=True)


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
