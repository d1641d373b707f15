"""Readers for cases and human labels (JSONL and CSV) with errors that name file, line and field.

A column mapping renames the file's fields to juge's (`{"id": "item_id", "output": "answer"}`
reads the file's `item_id` column as the case id). Unknown fields go to `meta` for cases.
"""

from __future__ import annotations

import codecs
import contextlib
import csv
import datetime
import functools
import gzip
import hashlib
import io
import json
import math
import random
import re
import shutil
import tarfile
import tempfile
import zipfile
from collections.abc import Callable, Generator, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar, cast

from pydantic import BaseModel, ValidationError

from juge.data.labels import check_label_row
from juge.data.paths import FieldPath, PathError, is_path, parse_path, resolve
from juge.data.records import Case, HumanLabel
from juge.errors import InputError, RowsName, input_error, validation_error

T = TypeVar("T", bound=BaseModel)

CASE_FIELDS = set(Case.model_fields)


def file_hash(path: str | Path) -> str:
    """sha256 of a file's bytes (of an archive member's, for ``ARCHIVE::MEMBER``): the dataset hash stored
    with every run."""
    parts = archive_parts(Path(path))
    if parts is not None and parts[1] is not None:
        return hashlib.sha256(_member_bytes(parts[0], parts[1])).hexdigest()
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def records_hash(records: Iterable[BaseModel]) -> str:
    """sha256 over the canonical JSON of records, for data that did not come from one file."""
    h = hashlib.sha256()
    for r in records:
        h.update(r.model_dump_json().encode())
        h.update(b"\n")
    return h.hexdigest()


def _check_file(path: Path) -> None:
    parts = archive_parts(path)
    if parts is not None:
        if not parts[0].is_file():
            raise InputError(f"{parts[0]}: file not found")
        return
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if path.is_dir() and not _is_hf_dataset(path):
        raise InputError(
            f"{path}: is a folder; give a file (.jsonl, .json, .csv, .tsv, .parquet, or .gz of one) "
            "or a Hugging Face dataset saved with save_to_disk"
        )


# ---- formats -------------------------------------------------------------------------------

FORMATS = ("jsonl", "json", "csv", "tsv", "parquet")
_SUFFIXES = {
    ".jsonl": "jsonl",
    ".ndjson": "jsonl",
    ".json": "json",
    ".csv": "csv",
    ".tsv": "tsv",
    ".parquet": "parquet",
}
_GZIP_MAGIC = b"\x1f\x8b"
KEY_JOIN = "/"  # a composite key `doc+system` reads as "<doc>/<system>"

Records = Sequence[Mapping[str, Any]]
Source = str | Path | Records | Any  # a path, a list of dicts, or a DataFrame-like table in memory


@dataclass(frozen=True)
class NamedRecords:
    """Records in memory with the name errors call them by (an API argument): a row's error then reads
    ``items[3].question``. The readers take it wherever they take records."""

    name: str
    records: Any


def named_records(name: str, source: Source) -> Source:
    """`source` as :class:`NamedRecords` called `name` when it is held in memory; a path as it is."""
    if not is_in_memory(source) or isinstance(source, NamedRecords):
        return source
    if isinstance(source, Mapping | str | bytes) or not isinstance(source, Iterable):
        raise InputError(
            f"{name}: give a file path, a pandas DataFrame or a list of dicts, not {type(source).__name__}"
        )
    return NamedRecords(name, source)


def unnamed(source: Source) -> Any:
    """The records (or path) a source holds, without its name."""
    return source.records if isinstance(source, NamedRecords) else source


def is_in_memory(source: Any) -> bool:
    """True for records held in memory (a list of dicts, a pandas DataFrame, a pyarrow Table, a HF Dataset)."""
    return not isinstance(source, str | Path)


def as_path(source: Source) -> Path:
    """The path of a source that is not in memory."""
    return Path(cast(str | Path, source))


def source_name(source: Any) -> str:
    """What errors call a source: its path, or ``<records>`` / ``<DataFrame>`` for data in memory."""
    if not is_in_memory(source):
        return str(source)
    if isinstance(source, NamedRecords):
        return RowsName(source.name)
    return "<DataFrame>" if hasattr(source, "columns") and hasattr(source, "to_dict") else "<records>"


# ---- archives and reading options ---------------------------------------------------------------

MEMBER_SEP = "::"  # `data.tar.gz::train.tsv`: one member of an archive
_ARCHIVE_SUFFIXES = (".tar", ".tgz", ".zip")
_NOT_DATA = ("__MACOSX/", "._", ".")  # what archivers add beside the data


def _is_archive_name(path: Path) -> bool:
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    return bool(suffixes) and suffixes[-1] in _ARCHIVE_SUFFIXES


def archive_parts(path: Path) -> tuple[Path, str | None] | None:
    """``(archive, member)`` for ``ARCHIVE::MEMBER``, ``(archive, None)`` for an archive named alone (.tar,
    .tar.gz, .tgz, .zip), None for any other path."""
    text = str(path)
    if MEMBER_SEP in text:
        head, _, member = text.rpartition(MEMBER_SEP)
        if _is_archive_name(Path(head)):
            return Path(head), member
    return (path, None) if _is_archive_name(path) and not path.is_dir() else None


def member_path(path: str | Path, member: str | None) -> str | Path:
    """`path` with ``--member NAME`` added (``ARCHIVE::NAME``); as it is without a member."""
    if not member:
        return path
    if archive_parts(Path(path)) is None:
        raise InputError(f"--member {member}: {path} is not an archive (.tar, .tar.gz, .tgz, .zip)")
    return f"{path}{MEMBER_SEP}{member}"


@functools.lru_cache(maxsize=16)
def _members(archive: Path, stamp: tuple[float, int]) -> tuple[str, ...]:
    """The regular files of an archive, in its order (cached per file version: a .tar.gz is read to list)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                return tuple(i.filename for i in z.infolist() if not i.is_dir())
        with tarfile.open(archive, "r:*") as t:
            return tuple(m.name for m in t.getmembers() if m.isfile())
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(f"{archive}: not a readable tar or zip archive ({exc})") from None


def _archive_members(archive: Path) -> tuple[str, ...]:
    st = archive.stat()
    return _members(archive, (st.st_mtime, st.st_size))


def _data_members(archive: Path) -> list[str]:
    """Members that hold data juge reads (by suffix), without the files archivers add."""
    out = []
    for name in _archive_members(archive):
        base = name.rsplit("/", 1)[-1]
        if name.startswith(_NOT_DATA[0]) or base.startswith(_NOT_DATA[1:]):
            continue
        suffixes = [s.lower() for s in Path(base).suffixes]
        if suffixes and suffixes[-1] == ".gz":
            suffixes.pop()
        if suffixes and suffixes[-1] in _SUFFIXES:
            out.append(name)
    return out


def resolve_member(path: Path) -> Path:
    """An archive path with its member named: the one given (which must be there), else its one data member;
    several data members are an error naming them. Any other path as it is."""
    parts = archive_parts(path)
    if parts is None:
        return path
    archive, member = parts
    if not archive.is_file():
        raise InputError(f"{archive}: file not found")
    if member is not None:
        if member not in _archive_members(archive):
            data = _data_members(archive)
            raise InputError(f"{archive}: no member {member!r} (data members: {', '.join(data) or 'none'})")
        return path
    data = _data_members(archive)
    if len(data) != 1:
        names = ", ".join(data[:10]) + (", ..." if len(data) > 10 else "")
        what = f"{len(data)} data members ({names})" if data else "no data member (.jsonl, .json, .csv, .tsv, .parquet)"
        raise InputError(f"{archive}: the archive holds {what}; name one with --member NAME or {archive}::NAME")
    return Path(f"{archive}{MEMBER_SEP}{data[0]}")


def _member_bytes(archive: Path, member: str) -> bytes:
    """The bytes of one member (gunzipped when it is a .gz itself, known by its bytes)."""
    try:
        if zipfile.is_zipfile(archive):
            with zipfile.ZipFile(archive) as z:
                raw = z.read(member)
        else:
            with tarfile.open(archive, "r:*") as t:
                f = t.extractfile(member)
                if f is None:
                    raise InputError(f"{archive}: member {member!r} is not a file")
                raw = f.read()
    except KeyError:
        raise InputError(f"{archive}: no member {member!r}") from None
    except (tarfile.TarError, zipfile.BadZipFile, OSError, EOFError) as exc:
        raise InputError(f"{archive}: cannot read member {member!r} ({exc})") from None
    if raw[:2] == _GZIP_MAGIC:
        try:
            raw = gzip.decompress(raw)
        except (OSError, EOFError) as exc:
            raise InputError(f"{archive}{MEMBER_SEP}{member}: cannot be decompressed: {exc}") from None
    return raw


QUOTING_NONE = ";quoting=none"  # added to a format (``tsv;quoting=none``, or alone): quotes are plain text


def with_quoting(format: str | None, quoting: str | None) -> str | None:
    """The format text with ``--quoting`` in it: ``none`` reads quotes in CSV/TSV cells as plain characters,
    ``minimal`` (the default) as CSV quoting."""
    if quoting in (None, "minimal"):
        return format
    if quoting != "none":
        raise InputError(f"--quoting must be minimal or none, got {quoting!r}")
    return f"{format or ''}{QUOTING_NONE}"


def quotes_cells(format: str | None) -> bool:
    """Whether CSV quoting applies under this format text (False after --quoting none)."""
    return _split_format(format)[1]


def _split_format(format: str | None) -> tuple[str | None, bool]:
    """(the format's name or None, whether CSV quoting applies) of a format text."""
    if format is not None and format.endswith(QUOTING_NONE):
        return format[: -len(QUOTING_NONE)] or None, False
    return format, True


def file_format(path: Path, format: str | None = None) -> str:
    """The format of `path`: `format` when given (one of FORMATS), else from its suffix (a `.gz` is looked
    through: `cases.csv.gz` is csv; an archive's by its member's name); a folder is a Hugging Face dataset
    (``hf``)."""
    format, _ = _split_format(format)
    parts = archive_parts(path)
    if parts is not None and format is None:
        path = Path(resolve_member(path).name.rpartition(MEMBER_SEP)[2])
    if format is not None:
        if format not in FORMATS:
            raise InputError(f"--format: {format!r} is not one of {', '.join(FORMATS)}")
        return format
    if path.is_dir():
        return "hf"
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] == ".gz":
        suffixes.pop()
    fmt = _SUFFIXES.get(suffixes[-1]) if suffixes else None
    if fmt is None:
        raise InputError(
            f"{path}: unknown format {path.suffix or '(no suffix)'!r}; name the file .jsonl, .json, .csv, .tsv "
            "or .parquet (a .gz of any), or give --format"
        )
    return fmt


def _is_gzip(path: Path) -> bool:
    if archive_parts(path) is not None:
        return False  # a member is gunzipped as it is read
    with path.open("rb") as f:
        return f.read(2) == _GZIP_MAGIC


def _open_bytes(path: Path) -> Any:
    """The file's bytes as a binary stream, gunzipped when it is gzip (known by its first bytes, not its name);
    an archive's member (``ARCHIVE::MEMBER``) read whole."""
    parts = archive_parts(path)
    if parts is not None:
        archive, member = archive_parts(resolve_member(path)) or parts
        assert member is not None  # resolve_member names it
        return io.BytesIO(_member_bytes(archive, member))
    return gzip.open(path, "rb") if _is_gzip(path) else path.open("rb")


def _read_bytes(path: Path) -> bytes:
    with _open_bytes(path) as f:
        try:
            return f.read()
        except (OSError, EOFError) as exc:
            raise input_error(path, f"cannot be decompressed: {exc}") from None


def _read_text(path: Path) -> str:
    _check_file(path)
    raw = _read_bytes(path)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        line = raw[: exc.start].count(b"\n") + 1
        raise input_error(path, f"not UTF-8 (byte {exc.start}); re-save the file as UTF-8", line=line) from None
    if not text.strip():
        raise input_error(path, "file is empty")
    return text


def _text_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Every line of a UTF-8 text file (gzipped or not) as (line number, text with its line end), one at a time.

    Lines end at ``\n``; a UTF-8 BOM is dropped. A byte that is not UTF-8 is reported on its line with its
    offset after the BOM, as by a whole-file decode.
    """
    _check_file(path)
    offset = 0
    with _open_bytes(path) as f:
        try:
            for lineno, raw in enumerate(f, start=1):
                if lineno == 1 and raw.startswith(codecs.BOM_UTF8):
                    raw = raw[len(codecs.BOM_UTF8) :]  # offsets count from after it, as in a whole-file decode
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as exc:
                    where = offset + exc.start
                    raise input_error(
                        path, f"not UTF-8 (byte {where}); re-save the file as UTF-8", line=lineno
                    ) from None
                offset += len(raw)
                yield lineno, line
        except (OSError, EOFError) as exc:  # a truncated or corrupt .gz
            raise input_error(path, f"cannot be decompressed: {exc}") from None


def _jsonl_lines(path: Path) -> Iterator[tuple[int, str]]:
    """Non-blank lines of a UTF-8 text file (gzipped or not) as (line number, text), read one at a time
    (see :func:`_text_lines`; a ``\r`` before a line's end is whitespace to JSON); a file with no non-blank
    line is empty."""
    any_text = False
    for lineno, line in _text_lines(path):
        if line.strip():
            any_text = True
            yield lineno, line
    if not any_text:
        raise input_error(path, "file is empty")


_LONE_CR = re.compile(r"(?<=\r)(?!\n)")  # a line end of old Mac files, inside a line split at \n


def _csv_lines(path: Path) -> Iterator[str]:
    """The lines of a CSV/TSV file for the csv module, read one at a time (a line ends at \n, \r\n or \r,
    as io's universal newlines split them)."""
    for _, line in _text_lines(path):
        if "\r" in line[:-2]:
            yield from (part for part in _LONE_CR.split(line) if part)
        else:
            yield line


def iter_rows(source: Source, *, format: str | None = None) -> Generator[tuple[int, dict[str, Any]], None, None]:
    """Rows of a file or of records in memory as (line number, dict), one at a time.

    Files: JSON lines, a JSON document (an array of objects, an object of objects keyed by id, or an
    object holding one array of objects), CSV, TSV, Parquet, a ``.gz`` of any, chosen by suffix or
    `format`; a folder written by Hugging Face ``Dataset.save_to_disk``. A JSON lines file is never held
    whole. In memory: a list of dicts, a pandas DataFrame, a pyarrow Table or a HF Dataset; their line is
    the row number counted from 1. Errors name the file (or ``<records>``) and line.
    """
    if is_in_memory(source):
        yield from _memory_rows(source)
        return
    path = resolve_member(as_path(source))  # an archive's member is named in every error
    _check_file(path)
    fmt = file_format(path, format)
    if fmt == "jsonl":
        for lineno, line in _jsonl_lines(path):
            yield lineno, _json_object(path, lineno, line)
    elif fmt == "json":
        yield from _json_document_rows(path)
    elif fmt in ("csv", "tsv"):
        yield from _csv_rows(path, "\t" if fmt == "tsv" else ",", quoting=_split_format(format)[1])
    elif fmt == "parquet":
        yield from _parquet_rows(path)
    else:
        yield from _hf_dataset_rows(path)


def read_rows(source: Source, *, format: str | None = None) -> list[tuple[int, dict[str, Any]]]:
    """Every row of :func:`iter_rows` as a list."""
    return list(iter_rows(source, format=format))


MAX_DEPTH = 64  # levels of nested objects and arrays in one row (a case's meta, a conversation)


class _DuplicateKey(InputError, ValueError):
    def __init__(self, key: str):
        super().__init__(key)
        self.key = key


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        raise _DuplicateKey(next(k for k, _ in pairs if k in seen or seen.add(k)))  # type: ignore[func-returns-value]
    return obj


_KEY_END = re.compile(r'"\s*:')


def _count_keys(value: Any) -> int:
    total, stack = 0, [value]
    while stack:
        node = stack.pop()
        children = node.values() if isinstance(node, dict) else node
        total += len(node) if isinstance(node, dict) else 0
        stack.extend(child for child in children if isinstance(child, (dict, list)))
    return total


def _may_hide_duplicates(text: str, value: Any) -> bool:
    """False when `text` cannot hold a duplicate key: every key is a string followed by ':', so the
    text has at least as many '":' as the objects have keys, and exactly as many unless a key was lost
    (or a string value holds '":', which only costs the slower check)."""
    if not isinstance(value, (dict, list)):
        return False
    if isinstance(value, dict) and text.count(":") == len(value):  # the common flat row, counted in C
        return False
    return len(_KEY_END.findall(text)) != _count_keys(value)


def _too_deep(value: Any) -> str | None:
    """The top-level field of `value` nested deeper than MAX_DEPTH (iteratively: no recursion limit)."""
    for key, item in value.items():
        stack = [(item, 2)]
        while stack:
            node, depth = stack.pop()
            if isinstance(node, (dict, list)):
                if depth > MAX_DEPTH:
                    return str(key)
                stack.extend((child, depth + 1) for child in (node.values() if isinstance(node, dict) else node))
    return None


def json_error_detail(exc: json.JSONDecodeError) -> str:
    """What is wrong with one line of JSON, and at which column of that line.

    A truncated or unfinished line fails past its end: json then counts from the line after the row's
    newline (column 1 of line 2), so the column given is the one just after the line's last character.
    """
    end = len(exc.doc.rstrip("\r\n"))
    if exc.pos < end:  # json's 'Invalid control character at', 'Unterminated string starting at'
        return f"{exc.msg} column {exc.colno}" if exc.msg.endswith(" at") else f"{exc.msg} (column {exc.colno})"
    what = "a string is not closed" if exc.msg.startswith("Invalid control character") else exc.msg
    return f"{what} at the end of the line (column {end + 1})"


def loads_row(path: Path, lineno: int, text: str, field: str | None = None) -> Any:
    """JSON text of one row: a duplicate key, a number too long to read or nesting deeper than
    MAX_DEPTH is an input error naming file, line (and the key), never a silent last-wins or a traceback."""
    try:
        value = json.loads(text)
        if _may_hide_duplicates(text, value):  # rare: only then the slower parse that names the key
            json.loads(text, object_pairs_hook=_no_duplicate_keys)
        return value
    except _DuplicateKey as exc:
        raise input_error(
            path, f"duplicate key {exc.key!r} in one object (JSON keeps only the last)", line=lineno, field=exc.key
        ) from None
    except json.JSONDecodeError as exc:
        raise input_error(path, f"malformed JSON: {json_error_detail(exc)}", line=lineno, field=field) from None
    except RecursionError:
        raise input_error(path, f"JSON nested deeper than {MAX_DEPTH} levels", line=lineno, field=field) from None
    except ValueError as exc:  # e.g. an integer of over 4,300 digits
        raise input_error(path, f"unreadable JSON value: {exc}", line=lineno, field=field) from None


def _json_object(path: Path, lineno: int, line: str) -> dict[str, Any]:
    obj = loads_row(path, lineno, line)
    if not isinstance(obj, dict):
        raise input_error(path, f"expected a JSON object, got {type(obj).__name__}", line=lineno)
    deep = _too_deep(obj) if line.count("{") + line.count("[") > MAX_DEPTH else None  # counting is cheap
    if deep is not None:
        raise input_error(path, f"nested deeper than {MAX_DEPTH} levels", line=lineno, field=deep)
    return obj


def _json_document_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """A `.json` file: an array of objects, an object of objects, an object with one array of objects, or
    (as ``Dataset.to_json`` writes) JSON lines. Each record's line is the line its value starts on."""
    text = _read_text(path)
    decoder = json.JSONDecoder()
    start = len(text) - len(text.lstrip())
    try:
        first, end = decoder.raw_decode(text, start)
    except json.JSONDecodeError as exc:
        raise input_error(path, f"malformed JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if text[end:].strip():  # more than one document: JSON lines under a .json name
        for lineno, line in enumerate(text.split("\n"), start=1):
            if line.strip():
                yield lineno, _json_object(path, lineno, line)
        return

    def line_of(pos: int) -> int:
        return text.count("\n", 0, pos) + 1

    if isinstance(first, dict):
        arrays = [k for k, v in first.items() if isinstance(v, list)]
        if first and all(isinstance(v, dict) for v in first.values()):
            for key, pos in _member_positions(text, start, decoder):
                record = first[key]
                yield line_of(pos), record if "id" in record else {"id": key, **record}
            return
        if len(arrays) == 1 and all(isinstance(v, dict) for v in first[arrays[0]]):
            inner = text.index("[", _value_position(text, start, decoder, arrays[0]))
            yield from _array_rows(path, text, inner, decoder, line_of)
            return
        raise input_error(
            path,
            "a JSON object that holds no records: expected an array of objects, an object of objects "
            "(keyed by id), or an object with one array of objects",
            line=line_of(start),
        )
    if not isinstance(first, list):
        raise input_error(path, f"expected a JSON array of objects, got {type(first).__name__}", line=1)
    yield from _array_rows(path, text, start, decoder, line_of)


def _skip(text: str, pos: int, chars: str = " \t\r\n") -> int:
    while pos < len(text) and text[pos] in chars:
        pos += 1
    return pos


def _array_rows(
    path: Path, text: str, start: int, decoder: json.JSONDecoder, line_of: Callable[[int], int]
) -> Iterator[tuple[int, dict[str, Any]]]:
    """The objects of the (valid) JSON array starting at `start`, with the line each starts on."""
    pos = _skip(text, start + 1)
    while pos < len(text) and text[pos] != "]":
        value, end = decoder.raw_decode(text, pos)
        if not isinstance(value, dict):
            raise input_error(path, f"expected a JSON object, got {type(value).__name__}", line=line_of(pos))
        yield line_of(pos), value
        pos = _skip(text, _skip(text, end), " \t\r\n,")


def _member_positions(text: str, start: int, decoder: json.JSONDecoder) -> Iterator[tuple[str, int]]:
    """(key, position of its value) for each member of the (valid) JSON object starting at `start`."""
    pos = _skip(text, start + 1)
    while pos < len(text) and text[pos] != "}":
        key, end = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, end), " \t\r\n:")
        yield key, pos
        _, end = decoder.raw_decode(text, pos)
        pos = _skip(text, _skip(text, end), " \t\r\n,")


def _value_position(text: str, start: int, decoder: json.JSONDecoder, key: str) -> int:
    return next(pos for k, pos in _member_positions(text, start, decoder) if k == key)


def _comment_fields(fieldnames: Sequence[str]) -> list[str]:
    """The header's trailing comment fields: empty names or names starting with ``#`` after the last real
    column (tools write a note there); their cells are not read."""
    out: list[str] = []
    for name in reversed(fieldnames):
        if name.strip() and not name.strip().startswith("#"):
            break
        out.append(name)
    return out[::-1] if len(out) < len(fieldnames) else []


def _separator(delimiter: str, quoting: bool) -> str:
    """How a CSV/TSV file was read, for messages: ``tab-separated, quotes as CSV quoting``."""
    name = "tab" if delimiter == "\t" else repr(delimiter) if delimiter != "," else "comma"
    return f"{name}-separated, " + ("quotes as CSV quoting" if quoting else "quotes as plain text (--quoting none)")


def _csv_rows(path: Path, delimiter: str, *, quoting: bool = True) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a CSV/TSV file (gzipped or not) read one line at a time: a file is never held whole."""
    options: dict[str, Any] = {"strict": True} if quoting else {"quoting": csv.QUOTE_NONE}
    reader = csv.DictReader(_csv_lines(path), delimiter=delimiter, **options)
    read_as = _separator(delimiter, quoting)
    any_row = False
    try:
        if not reader.fieldnames:
            raise input_error(path, "no header row")
        comments = set(_comment_fields(reader.fieldnames))
        columns = [name for name in reader.fieldnames if name not in comments]
        twice = next((name for k, name in enumerate(columns) if name in columns[:k]), None)
        if twice is not None:
            raise input_error(path, f"two columns named {twice!r} (only one would be read)", line=1, field=twice)
        for row in reader:
            lineno = reader.line_num
            if None in row:
                raise input_error(
                    path, f"more values than header columns ({len(columns)}; read as {read_as})", line=lineno
                )
            for name in comments:
                row.pop(name, None)
            if None in row.values():  # the columns a short row lacks (a cell read is always a str)
                sep = "tab" if delimiter == "\t" else "comma" if delimiter == "," else repr(delimiter)
                raise input_error(
                    path,
                    f"fewer values than header columns ({len(columns)}; read as {read_as}); an empty cell still "
                    f"needs its {sep}",
                    line=lineno,
                )
            any_row = True
            yield lineno, {k: (v if v != "" else None) for k, v in row.items()}
    except csv.Error as exc:
        # line_num is the last line read cleanly; the bad row starts on the next one.
        hint = "; if quotes are plain characters in this file, give --quoting none" if quoting else ""
        raise input_error(
            path,
            f"malformed {'TSV' if delimiter == chr(9) else 'CSV'} in the row starting here: {exc} (an unclosed "
            f"quote? read as {read_as}{hint})",
            line=reader.line_num + 1,
        ) from None
    if not any_row:
        raise input_error(path, "header only, no rows")


def header_note(source: Source, format: str | None = None) -> str | None:
    """The note for a CSV/TSV header with trailing comment fields (empty or ``#...``), which are not read."""
    if is_in_memory(source):
        return None
    path = resolve_member(as_path(source))
    if path.is_dir() or file_format(path, format) not in ("csv", "tsv"):
        return None
    first = next(_csv_lines(path), "").rstrip("\r\n")
    delimiter = "\t" if file_format(path, format) == "tsv" else ","
    comments = _comment_fields(next(csv.reader([first], delimiter=delimiter), []))
    if not comments:
        return None
    names = ", ".join(repr(c) for c in comments)
    return f"{source_name(source)}: the header's trailing comment field(s) {names} are not read as columns"


def _pyarrow(path: Path) -> Any:
    try:
        import pyarrow
    except ImportError:
        raise input_error(path, "reading Parquet or Arrow needs pyarrow: pip install 'juge[parquet]'") from None
    return pyarrow


PARQUET_BATCH_ROWS = 4096  # rows turned into dicts at a time: a bound on memory whatever the file's size


def _parquet_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a Parquet file (gzipped or not), batch by batch; the line is the row number from 1."""
    _pyarrow(path)
    import pyarrow.parquet as pq

    with contextlib.ExitStack() as stack:
        source: Any = path
        if archive_parts(path) is not None:
            source = io.BytesIO(_read_bytes(path))
        elif _is_gzip(path):  # Parquet reads its footer first: gunzip to a temporary file, not to memory
            source = stack.enter_context(tempfile.TemporaryFile())
            with _open_bytes(path) as f:
                try:
                    shutil.copyfileobj(f, source)
                except (OSError, EOFError) as exc:
                    raise input_error(path, f"cannot be decompressed: {exc}") from None
            source.seek(0)
        try:
            parquet = pq.ParquetFile(source)
        except Exception as exc:  # pyarrow raises its own error types for a file that is not Parquet
            raise input_error(path, f"not a readable Parquet file ({exc})") from None
        lineno = 0
        for batch in parquet.iter_batches(batch_size=PARQUET_BATCH_ROWS):
            for row in batch.to_pylist():
                lineno += 1
                yield lineno, row
    if not lineno:
        raise input_error(path, "no rows")


def _is_hf_dataset(path: Path) -> bool:
    return path.is_dir() and ((path / "state.json").is_file() or (path / "dataset_dict.json").is_file())


def _hf_dataset_rows(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of a folder written by ``datasets.Dataset.save_to_disk`` (Arrow stream files listed in its
    state.json), read with pyarrow alone; the line is the row number from 1."""
    if (path / "dataset_dict.json").is_file():
        splits = json.loads((path / "dataset_dict.json").read_text()).get("splits", [])
        raise input_error(
            path,
            f"a DatasetDict with splits {', '.join(map(str, splits))}: give one split's folder, e.g. "
            f"{path / str(splits[0]) if splits else path}",
        )
    pa = _pyarrow(path)
    try:
        files = [entry["filename"] for entry in json.loads((path / "state.json").read_text())["_data_files"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise input_error(path / "state.json", f"not a save_to_disk state file ({exc})") from None
    lineno = 0
    for name in files:
        with pa.memory_map(str(path / name)) as source:
            for batch in pa.ipc.open_stream(source):
                for row in batch.to_pylist():
                    lineno += 1
                    yield lineno, row
    if not lineno:
        raise input_error(path, "no rows")


def _memory_rows(source: Any) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of records in memory; missing values (None, NaN, pandas NA) become None."""
    name = source_name(source)
    source = unnamed(source)
    if hasattr(source, "columns") and hasattr(source, "to_dict"):  # a pandas DataFrame
        records: Iterable[Any] = source.to_dict("records")
    elif hasattr(source, "to_pylist"):  # a pyarrow Table
        records = source.to_pylist()
    elif hasattr(source, "to_list") and hasattr(source, "features"):  # a Hugging Face Dataset
        records = source.to_list()
    else:
        records = source
    any_row = False
    for lineno, row in enumerate(records, start=1):
        if not isinstance(row, Mapping):
            raise input_error(name, f"expected a record (a dict), got {type(row).__name__}", line=lineno)
        any_row = True
        yield lineno, {str(k): _missing_to_none(v) for k, v in row.items()}
    if not any_row:
        raise input_error(name, "no records")


def _missing_to_none(value: Any) -> Any:
    if value is None or isinstance(value, str | int | bool | list | dict):
        return value
    if isinstance(value, float):
        return None if math.isnan(value) else value
    try:
        import pandas as pd

        if pd.isna(value) is True:
            return None
    except (ImportError, TypeError, ValueError):
        pass
    if isinstance(value, datetime.date):  # a pandas Timestamp too: read as a file would hold it
        return value.isoformat()
    if hasattr(value, "item"):  # a numpy scalar
        return value.item()
    if hasattr(value, "tolist"):  # a numpy array in a cell
        return value.tolist()
    return value


def source_hash(source: Source) -> str:
    """sha256 of a file's bytes, of a save_to_disk folder's data files, or of records' canonical JSON."""
    if is_in_memory(source):
        h = hashlib.sha256()
        for _, row in _memory_rows(source):
            h.update(json.dumps(row, sort_keys=True, default=str, ensure_ascii=False).encode())
            h.update(b"\n")
        return h.hexdigest()
    path = as_path(source)
    if path.is_dir():
        h = hashlib.sha256()
        for f in sorted(p for p in path.iterdir() if p.suffix == ".arrow"):
            h.update(file_hash(f).encode())
        return h.hexdigest()
    return file_hash(path)


def parse_mapping(text: str | None, option: str = "--map") -> dict[str, str] | None:
    """`ours=theirs,...` (a command-line column mapping) -> {ours: theirs}; `theirs` may join columns
    with `+` (`id=doc+system`: the id is "<doc>/<system>")."""
    if not text:
        return None
    mapping = {}
    for part in text.split(","):
        ours, sep, theirs = part.partition("=")
        if not sep or not ours.strip() or not theirs.strip():
            raise InputError(f"{option}: expected juge_field=column pairs separated by commas, got {part!r}")
        if ours.strip() in mapping:
            raise InputError(f"{option}: {ours.strip()!r} is mapped twice")
        mapping[ours.strip()] = theirs.strip()
    return mapping


#: ``--map id=@row`` (``--id row``): a row's id is its file's name and its row number (:func:`row_id`).
ROW_ID = "@row"


def row_id(source: Source, row: int) -> str:
    """The id ``--id row`` gives the `row`-th record (from 1) of `source`: the file name without its suffixes
    and the row number, ``items:3``. It stays the same while the file's rows keep their order; records in
    memory are named as errors name them (``items``, ``records``)."""
    name = source_name(source)
    if not is_in_memory(source):
        name = Path(name).name.split(".")[0] or Path(name).name
    return f"{str(name).strip('<>')}:{row}"


def row_id_note(source: Source, mapping: Mapping[str, str] | None) -> str | None:
    """What the output says when ids were made from the rows (``--id row``), the first id as example."""
    if not mapping or mapping.get("id") != ROW_ID:
        return None
    return (
        f"item ids are made from the file name and the row number (--id row: {row_id(source, 1)} is the first "
        "row); they stay the same while the file's rows keep their order"
    )


def with_row_id(mapping: Mapping[str, str] | None, id: str | None, option: str = "--map") -> dict[str, str] | None:
    """`mapping` with the id ``--id`` names: ``row`` (the row number, :data:`ROW_ID`) or a column. ``--id`` and
    an `id` in the mapping together are an error."""
    if not id:
        return dict(mapping) if mapping else None
    if mapping and "id" in mapping:
        raise InputError(f"--id {id} and {option} id={mapping['id']}: give the id one way")
    return {**(mapping or {}), "id": ROW_ID if id.strip() == "row" else id.strip()}


def literal(theirs: str) -> str | None:
    """The value a mapping gives every row when it is single-quoted (``order='12'``: a file of one order), or
    None when it names a column."""
    return theirs[1:-1] if len(theirs) >= 2 and theirs[0] == theirs[-1] == "'" else None


def _columns(theirs: str, row: Mapping[str, Any]) -> list[str]:
    """The columns a mapped field reads: the one named, or the parts of a `+` composite (none for @row or a
    'literal'); a part may be a path into a nested field (``results[0].winner``, see :mod:`juge.data.paths`)."""
    if theirs == ROW_ID or literal(theirs) is not None:
        return []
    if theirs in row or "+" not in theirs:
        return [theirs]
    return [part.strip() for part in theirs.split("+")]


@functools.lru_cache(maxsize=256)
def _path(text: str) -> FieldPath | None:
    """The path a mapped part names, or None for a plain column name."""
    return parse_path(text) if is_path(text) else None


def _top_column(part: str, columns: Mapping[str, Any] | set[str]) -> str:
    """The top-level column a part needs: itself, or the field its path starts at."""
    if part in columns:
        return part
    found = _path(part)
    return found.first if found is not None else part


def _part_value(row: Mapping[str, Any], part: str) -> tuple[bool, Any]:
    """(found, value) of one mapped part in a row: its column, else its path (PathError when it breaks)."""
    if part in row:
        return True, row[part]
    found = _path(part)
    if found is None or found.first not in row:
        return False, None
    return True, resolve(row, found)


def check_mapping(
    path: Any,
    rows: Iterable[tuple[int, dict[str, Any]]],
    mapping: Mapping[str, str] | None,
    fields: Iterable[str],
    option: str = "--map",
) -> None:
    """A mapping may only name juge's fields, and only columns the file has: a typo is an error, not a no-op."""
    if not mapping:
        return
    check_mapping_fields(path, mapping, fields, option)
    seen: set[str] = set()
    for _, row in rows:
        seen.update(row)
    _check_mapped_columns(path, mapping, seen, option)


def check_mapping_fields(path: Any, mapping: Mapping[str, str], fields: Iterable[str], option: str = "--map") -> None:
    known = set(fields)
    for ours in mapping:
        if ours not in known:
            raise input_error(
                source_name(path),
                f"{option} names {ours!r}, which is not a juge field here (fields: {', '.join(sorted(known))})",
                field=ours,
            )


def _check_mapped_columns(
    path: Any, mapping: Mapping[str, str], columns: set[str], option: str, every: set[str] | None = None
) -> None:
    """Every column the mapping reads is among `columns`; `every` (all the file's columns) names the choice."""
    for ours, theirs in mapping.items():
        for part in _columns(theirs, dict.fromkeys(columns)):
            _path(part)  # a path's syntax error names the option before any row is read
        needs = [_top_column(c, columns) for c in _columns(theirs, dict.fromkeys(columns))]
        missing = [c for c in needs if c not in columns]
        if missing:
            raise input_error(
                source_name(path),
                f"{option} reads {ours!r} from column {missing[0]!r}, which no row of the file has "
                f"(columns: {', '.join(sorted(every if every is not None else columns)) or 'none'})",
                field=ours,
            )


def apply_mapping(row: dict[str, Any], mapping: Mapping[str, str] | None) -> dict[str, Any]:
    """The row with the mapped columns under juge's names. A `+` composite joins its parts' text with
    "/" and is missing (None) when any part is missing."""
    if not mapping:
        return dict(row)
    out = dict(row)
    for ours, theirs in mapping.items():
        cols = _columns(theirs, row)
        if not cols:  # @row: the caller, which knows the row, sets it
            fixed = literal(theirs)
            if fixed is not None:
                out[ours] = fixed
            continue
        if len(cols) == 1:
            if theirs in row:
                out[ours] = row[theirs]
                if theirs != ours and theirs not in mapping:
                    out.pop(theirs, None)
            else:
                found, value = _part_value(row, theirs)
                if found:
                    out[ours] = value
            continue
        parts = [_part_value(row, c)[1] for c in cols]
        out[ours] = None if any(p in (None, "") for p in parts) else KEY_JOIN.join(str(p) for p in parts)
    return out


_apply_mapping = apply_mapping


def mapped_rows(
    source: Source,
    mapping: Mapping[str, str] | None,
    fields: Iterable[str],
    *,
    format: str | None = None,
    option: str = "--map",
) -> Iterator[tuple[int, dict[str, Any]]]:
    """Rows of :func:`iter_rows` with `mapping` applied, one at a time. The mapping is checked first (its
    fields, then, in a first pass over the rows that stops once every column is found, its columns), so a
    typo in it is reported before any row's error."""
    if mapping:
        check_mapping_fields(source, mapping, fields, option)
        try:
            needed = {
                c
                for theirs in mapping.values()
                if theirs != ROW_ID and literal(theirs) is None
                for part in [theirs, *theirs.split("+")]
                for c in (part.strip(), _top_column(part.strip(), set()))
            }
        except InputError as exc:  # a path's syntax: name the option and field
            raise InputError(str(exc).replace("--map", option, 1)) from None
        seen: set[str] = set()
        every: set[str] = set()  # for the message, should a column be missing
        for _, row in iter_rows(source, format=format):
            seen |= needed & row.keys()
            every |= row.keys()
            if all(
                all(_top_column(c, seen) in seen for c in _columns(t, dict.fromkeys(seen)))
                for t in mapping.values()
                if t != ROW_ID
            ):
                break
        _check_mapped_columns(source, mapping, seen, option, every)
    by_row = [ours for ours, theirs in (mapping or {}).items() if theirs == ROW_ID]
    for number, (lineno, row) in enumerate(iter_rows(source, format=format), start=1):
        try:
            out = apply_mapping(row, mapping)
        except PathError as exc:
            ours = next((o for o, t in (mapping or {}).items() if _path_breaks(row, t)), None)
            where = f"{option} {ours}={(mapping or {})[ours]}" if ours else option
            raise input_error(source_name(source), f"{where}: {exc}", line=lineno, field=ours) from None
        for ours in by_row:
            out[ours] = row_id(source, number)
        yield lineno, out


def _path_breaks(row: Mapping[str, Any], theirs: str) -> bool:
    try:
        for part in _columns(theirs, row):
            _part_value(row, part)
    except PathError:
        return True
    return False


def case_line(path: Source, case_id: str, mapping: Mapping[str, str] | None = None) -> int | None:
    """The line of case `case_id` in its cases file, for a message about that case (None if absent)."""
    by_row = bool(mapping and mapping.get("id") == ROW_ID)
    for number, (lineno, row) in enumerate(iter_rows(path), start=1):
        found = row_id(path, number) if by_row else apply_mapping(row, mapping).get("id")
        if str(found) == case_id:
            return lineno
    return None


def repeat_of(name: str, line: int, row: Mapping[str, Any]) -> int:
    """A recorded call's ``repeat`` column (0 when absent), or an error naming the row."""
    try:
        return int(row.get("repeat") or 0)
    except (TypeError, ValueError):
        raise input_error(name, f"repeat {row['repeat']!r} is not a whole number", line=line, field="repeat") from None


def _parse_json_fields(path: Path, lineno: int, row: dict[str, Any], fields: Sequence[str]) -> None:
    # CSV cells that should hold structures (messages, meta) are JSON text.
    for name in fields:
        value = row.get(name)
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):
            row[name] = loads_row(path, lineno, value, field=name)
            if isinstance(row[name], (dict, list)) and _too_deep({name: row[name]}) is not None:
                raise input_error(path, f"nested deeper than {MAX_DEPTH} levels", line=lineno, field=name)


def read_cases(
    source: Source,
    mapping: Mapping[str, str] | None = None,
    *,
    format: str | None = None,
    as_text: dict[str, int] | None = None,
) -> list[Case]:
    """Read cases from any shape :func:`iter_rows` reads. Fields juge does not know go to `meta`.

    A JSON number or boolean in a text field is read as its JSON text (``true`` -> ``"true"``) and counted
    per field in `as_text` when given (:func:`as_text_note` says it once). Raises InputError naming file,
    line and field for malformed rows, a missing or duplicate id, wrong types, an empty or non-UTF-8 file.
    """
    return cases_from_rows(
        source_name(source),
        mapped_rows(source, mapping, CASE_FIELDS, format=format),
        id_mapped=bool(mapping and "id" in mapping),
        as_text=as_text,
    )


#: Case fields that hold text: a JSON number or boolean there is read as its text.
TEXT_FIELDS = ("category", "question", "context", "source", "reference", "output", "output_1", "output_2", "split")


def _scalars_as_text(row: dict[str, Any], counts: dict[str, int] | None) -> None:
    """A number or boolean in a text field as its JSON text (``true``, ``3``, ``2.5``), counted per field."""
    for name in TEXT_FIELDS:
        value = row.get(name)
        if isinstance(value, bool | int | float) and not (isinstance(value, float) and math.isnan(value)):
            row[name] = json.dumps(value)
            if counts is not None:
                counts[name] = counts.get(name, 0) + 1


def as_text_note(source: Source, counts: Mapping[str, int]) -> str | None:
    """The one note that says how many numbers or booleans in text fields were read as their text."""
    if not counts:
        return None
    fields = ", ".join(f"{name} {n}" for name, n in sorted(counts.items()))
    return (
        f"{source_name(source)}: {sum(counts.values())} JSON numbers or booleans in text fields were read as "
        f'their text (true as "true"; {fields})'
    )


def cases_from_rows(
    path: str,
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    drop: Iterable[str] = (),
    id_mapped: bool = False,
    as_text: dict[str, int] | None = None,
) -> list[Case]:
    """Cases from rows already mapped to juge's field names; the `drop` columns (labels, baselines) are not
    kept in `meta`. A missing or duplicate id, or a field of the wrong type, is an error naming its line.
    Numbers and booleans in text fields are counted in `as_text` (see :func:`read_cases`)."""
    cases: list[Case] = []
    seen: dict[str, int] = {}
    for lineno, case in _cases_of(path, rows, drop=drop, id_mapped=id_mapped, as_text=as_text):
        if case.id in seen:
            raise duplicate_case(path, case.id, lineno, seen[case.id])
        seen[case.id] = lineno
        cases.append(case)
    return cases


def iter_cases(
    source: Source,
    mapping: Mapping[str, str] | None = None,
    *,
    format: str | None = None,
    as_text: dict[str, int] | None = None,
) -> Iterator[tuple[int, Case]]:
    """The cases of a source as (line number, Case), one at a time (a JSONL file is never held whole).

    The same errors as :func:`read_cases` but one: duplicate ids are the caller's to find (see
    `duplicate_case`).
    """
    yield from _cases_of(
        source_name(source),
        mapped_rows(source, mapping, CASE_FIELDS, format=format),
        id_mapped=bool(mapping and "id" in mapping),
        as_text=as_text,
    )


def duplicate_case(path: str | Path, case_id: str, line: int, first: int) -> InputError:
    return input_error(path, f"duplicate id {case_id!r} (first on line {first})", line=line, field="id")


def _cases_of(
    path: str,
    rows: Iterable[tuple[int, dict[str, Any]]],
    *,
    drop: Iterable[str] = (),
    id_mapped: bool = False,
    as_text: dict[str, int] | None = None,
) -> Iterator[tuple[int, Case]]:
    dropped = set(drop)
    where = Path(path)  # once, not per row
    for lineno, raw in rows:
        row = {k: v for k, v in raw.items() if k not in dropped}
        _scalars_as_text(row, as_text)
        _parse_json_fields(where, lineno, row, ("messages", "meta"))
        if row.get("id") in (None, ""):
            hint = (
                ""
                if id_mapped
                else f"; name the id column with --map id=COLUMN ({_cols(raw)}), or number the rows with --id row"
            )
            raise input_error(path, f"required field is missing{hint}", line=lineno, field="id")
        meta = row.pop("meta", None) or {}
        if not isinstance(meta, dict):
            raise input_error(path, "must be a JSON object", line=lineno, field="meta")
        meta = dict(meta)
        known = {k: v for k, v in row.items() if k in CASE_FIELDS}
        meta.update({k: v for k, v in row.items() if k not in CASE_FIELDS})
        if isinstance(known.get("id"), float) and known["id"].is_integer():
            known["id"] = int(known["id"])  # a numeric id column read as float (Parquet, pandas)
        try:
            case = Case.model_validate({**known, "meta": meta})
        except ValidationError as exc:
            raise validation_error(path, exc, line=lineno) from None
        yield lineno, case


def _cols(row: Mapping[str, Any]) -> str:
    names = list(row)
    return "columns: " + ", ".join(names[:12]) + (", ..." if len(names) > 12 else "")


def read_labels(
    source: Source,
    mapping: Mapping[str, str] | None = None,
    allowed: Iterable[str | int | float] | None = None,
    *,
    format: str | None = None,
) -> list[HumanLabel]:
    """Read one human label per row. `allowed` is the declared label set; any other label is an error."""
    path = source_name(source)
    allowed_set = {str(a) for a in allowed} if allowed is not None else None
    labels: list[HumanLabel] = []
    seen: dict[tuple[str, str], int] = {}
    for lineno, row in mapped_rows(source, mapping, HumanLabel.model_fields, format=format, option="--labels-map"):
        check_label_row(path, lineno, row, "--labels-map" if mapping else None)
        try:
            label = HumanLabel.model_validate(row)
        except ValidationError as exc:
            raise validation_error(path, exc, line=lineno) from None
        if allowed_set is not None and str(label.label) not in allowed_set:
            raise input_error(
                path, f"label {label.label!r} is not one of {sorted(allowed_set)}", line=lineno, field="label"
            )
        key = (label.item_id, label.rater_id)
        if key in seen:
            raise input_error(
                path,
                f"rater {label.rater_id!r} labelled item {label.item_id!r} twice (first on line {seen[key]})",
                line=lineno,
                field="rater_id",
            )
        seen[key] = lineno
        labels.append(label)
    return labels


def sample(items: Sequence[T], n: int | None, *, seed: int = 0) -> list[T]:
    """A seeded random sample of `n` items (all of them, shuffled, when n is None or >= len)."""
    rng = random.Random(seed)
    chosen = list(items)
    rng.shuffle(chosen)
    return chosen if n is None else chosen[:n]


def _group_bucket(group: str, seed: int) -> float:
    digest = hashlib.sha256(f"{seed}:{group}".encode()).digest()
    return int.from_bytes(digest[:8], "big") / 2**64


def split_of(group: str, *, holdout: float = 0.5, seed: int = 0) -> str:
    """'holdout' when a hash of (seed, group) falls below `holdout`, else 'dev'.

    A function of the group alone, so the split is stable: adding items never moves an
    existing group, and every item of a group lands on the same side.
    """
    if not 0.0 < holdout < 1.0:
        raise ValueError("holdout share must be between 0 and 1")
    return "holdout" if _group_bucket(group, seed) < holdout else "dev"


def split_by_group(cases: Sequence[Case], *, holdout: float = 0.5, seed: int = 0) -> dict[str, list[Case]]:
    """Split into dev and holdout so that no group is on both sides (see `split_of`)."""
    out: dict[str, list[Case]] = {"dev": [], "holdout": []}
    for case in cases:
        out[split_of(case.group, holdout=holdout, seed=seed)].append(case)
    return out
