"""Output files are written whole or not at all: a temporary file beside the target, then a rename.

The path ``-`` is standard output: the text is written there whole once the block succeeds.
"""

from __future__ import annotations

import json
import os
import shutil
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TextIO

from juge.errors import InputError, input_error


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


STDOUT = "-"
_data_stdout: TextIO | None = None  # standard output while `data_on_stdout` sends the rest to stderr


def is_stdout(path: str | Path | None) -> bool:
    return path is not None and str(path) == STDOUT


@contextmanager
def data_on_stdout() -> Iterator[None]:
    """While a command writes its data to standard output (``--json -``), everything else it prints
    (tables, progress, "wrote ...") goes to stderr, so the output parses as it is."""
    global _data_stdout
    saved = sys.stdout
    _data_stdout, sys.stdout = saved, sys.stderr
    try:
        yield
    finally:
        sys.stdout, _data_stdout = saved, None


@contextmanager
def _staged_stdout() -> Iterator[Path]:
    with tempfile.TemporaryDirectory(prefix="juge-stdout-") as folder:
        tmp = Path(folder) / "out"
        tmp.touch()
        yield tmp
        stream = _data_stdout or sys.stdout
        with tmp.open(encoding="utf-8", newline="") as f:
            shutil.copyfileobj(f, stream)
        stream.flush()


def _temp_beside(path: Path, where: str) -> Path:
    """An empty temporary file beside `path`; an InputError naming `where` when `path` cannot be written."""
    if path.is_dir():
        raise InputError(f"{where}: is a folder; give a file name")
    blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise InputError(f"{where}: {blocked} is a file, not a folder")
    if path.is_file() and not (os.access(path, os.W_OK) and path.stat().st_mode & 0o222):
        raise InputError(f"{where}: the file is read-only; make it writable or give another path")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp_name = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent)
    except OSError as exc:
        raise InputError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    os.close(fd)
    return Path(tmp_name)


def writable(path: Path | None, option: str) -> Path | None:
    """`path` if a file can be written there, else an InputError naming `option`: for an output written
    after work that records something, checked when the option is read (a typer callback)."""
    if path is not None and not is_stdout(path):
        _temp_beside(Path(path), f"{option} {path}").unlink()
    return path


@contextmanager
def staged(path: str | Path, option: str | None = None) -> Iterator[Path]:
    """A temporary file beside `path`, made now (so an unwritable place fails before any work);
    renamed onto `path` when the block ends without error, removed otherwise.

    A folder, a path under a file or a place that cannot be written is an InputError (exit 2) naming
    `option` (the command's output option) when given. The file gets the usual permissions (mkstemp's
    0600 would hide a shared report from colleagues).
    """
    if is_stdout(path):
        with _staged_stdout() as tmp:
            yield tmp
        return
    path = Path(path)
    where = f"{option} {path}" if option else str(path)
    made = [p for p in path.parents if not p.exists()]  # folders made for it, removed again on an error
    tmp = _temp_beside(path, where)
    try:
        yield tmp
        os.chmod(tmp, 0o666 & ~_umask())
        try:
            os.replace(tmp, path)
        except OSError as exc:
            raise InputError(f"{where}: cannot write there ({exc.strerror or exc})") from None
        made = []
    finally:
        tmp.unlink(missing_ok=True)
        for folder in made:
            try:
                folder.rmdir()
            except OSError:  # another output staged in it, or something else wrote there meanwhile
                break


@contextmanager
def staged_output(path: str | Path | None, option: str) -> Iterator[Path | None]:
    """`staged(path, option)` for a command's output option, entered before the command's work (so an
    unwritable place fails before anything is run, written or stored). Yields None when the option was
    not given."""
    if path is None:
        yield None
        return
    with staged(path, option) as tmp:
        yield tmp


@contextmanager
def staged_folder(path: str | Path, option: str | None = None) -> Iterator[Path]:
    """A temporary folder beside `path` (which must be missing or empty), made now; renamed onto `path`
    when the block ends without error, removed otherwise: a folder of outputs appears whole or not at all."""
    path = Path(path)
    where = f"{option} {path}" if option else str(path)
    if path.exists() and not path.is_dir():
        raise InputError(f"{where}: exists and is not a folder")
    if path.is_dir() and any(path.iterdir()):
        raise InputError(f"{where}: the folder is not empty; give a new or empty folder (nothing was written)")
    blocked = next((p for p in path.parents if p.exists() and not p.is_dir()), None)
    if blocked is not None:
        raise InputError(f"{where}: {blocked} is a file, not a folder")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = Path(tempfile.mkdtemp(prefix=f".{path.name}.", suffix=".tmp", dir=path.parent))
    except OSError as exc:
        raise InputError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    try:
        yield tmp
        os.chmod(tmp, 0o777 & ~_umask())
        try:
            os.replace(tmp, path)  # onto a missing or empty folder
        except OSError as exc:
            raise InputError(f"{where}: cannot write there ({exc.strerror or exc})") from None
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def write_with(path: str | Path, write: Callable[[Path], object]) -> Path:
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


def write_json(path: str | Path, data: Any) -> Path:
    """Write JSON atomically (indented by one space, UTF-8, a final newline).

    The text is written as it is encoded: an indented dump of a large study is a list of millions of
    small strings before it is joined.
    """

    def dump(tmp: Path) -> None:
        with tmp.open("w", encoding="utf-8", newline="") as f:
            json.dump(data, f, ensure_ascii=False, indent=1)
            f.write("\n")

    return write_with(path, dump)


def read_json_object(path: str | Path, what: str) -> dict[str, Any]:
    """A JSON object from a file; errors name the file and line."""
    path = Path(path)
    if not path.is_file():
        raise input_error(path, f"{what} file not found")
    try:
        obj = json.loads(path.read_text(encoding="utf-8"))
    except UnicodeDecodeError:
        raise input_error(path, "not UTF-8; re-save the file as UTF-8") from None
    except json.JSONDecodeError as exc:
        raise input_error(path, f"malformed JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(obj, dict):
        raise input_error(path, f"expected a JSON object ({what}), got {type(obj).__name__}", line=1)
    return obj
