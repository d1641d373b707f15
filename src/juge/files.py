"""Output files are written whole or not at all: a temporary file beside the target, then a rename."""

from __future__ import annotations

import os
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


@contextmanager
def staged(path: str | Path) -> Iterator[Path]:
    """A temporary file beside `path`, made now (so an unwritable place fails before any work);
    renamed onto `path` when the block ends without error, removed otherwise.

    The file gets the usual permissions (mkstemp's 0600 would hide a shared report from colleagues).
    """
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    os.close(fd)
    tmp = Path(tmp_name)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


def write_with(path: str | Path, write: Callable[[Path], None]) -> Path:
    """Call `write(tmp)` on a temporary path beside `path`, then rename it into place.

    On any error the temporary file is removed and `path` is left as it was.
    """
    with staged(path) as tmp:
        write(tmp)
    return Path(path)


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write text (UTF-8, newlines as given) or bytes to `path` atomically."""
    if isinstance(data, bytes):
        return write_with(path, lambda tmp: tmp.write_bytes(data))
    return write_with(path, lambda tmp: tmp.write_text(data, encoding="utf-8", newline=""))
