"""Readers stream CSV, TSV, Parquet and .gz files as they stream JSON lines: the first row comes before the file
is read whole (bytes read are counted), so `juge run` holds one row at a time whatever the format."""

from __future__ import annotations

import gzip
from pathlib import Path
from typing import Any

import pytest

import juge.data.readers as readers
from juge.data.readers import iter_cases, iter_rows

ROWS = 100_000


class CountingReader:
    """A binary stream that counts the bytes handed out."""

    def __init__(self, inner: Any, counts: list[int]) -> None:
        self.inner, self.counts = inner, counts

    def __iter__(self) -> Any:
        for line in self.inner:
            self.counts[0] += len(line)
            yield line

    def read(self, size: int = -1) -> bytes:
        data = self.inner.read(size)
        self.counts[0] += len(data)
        return data

    def __enter__(self) -> CountingReader:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()


@pytest.fixture
def counted(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    counts = [0]
    opened = readers._open_bytes
    monkeypatch.setattr(readers, "_open_bytes", lambda path: CountingReader(opened(path), counts))
    return counts


def write_table(path: Path, separator: str) -> int:
    lines = [separator.join(["id", "question", "output"])]
    lines += [separator.join([f"c{i}", f"question {i}", f'"an answer, {i}"']) for i in range(ROWS)]
    data = ("\n".join(lines) + "\n").encode()
    if path.suffix == ".gz":
        path.write_bytes(gzip.compress(data, compresslevel=1))
    else:
        path.write_bytes(data)
    return len(data)


@pytest.mark.parametrize("name", ["cases.csv", "cases.tsv", "cases.csv.gz", "cases.jsonl.gz"])
def test_the_first_row_comes_before_the_file_is_read(tmp_path: Path, counted: list[int], name: str) -> None:
    path = tmp_path / name
    if name.endswith(".jsonl.gz"):
        data = "".join(f'{{"id": "c{i}", "output": "an answer, {i}"}}\n' for i in range(ROWS)).encode()
        path.write_bytes(gzip.compress(data, compresslevel=1))
        size = len(data)
    else:
        size = write_table(path, "\t" if ".tsv" in name else ",")
    rows = iter_rows(path)
    line, row = next(rows)
    assert (line, row["id"]) == ((2, "c0") if ".jsonl" not in name else (1, "c0"))
    assert 0 < counted[0] < size / 50  # a small prefix, not the file
    cases = iter_cases(path)
    assert next(cases)[1].id == "c0"
    rows.close()
    cases.close()


def test_a_streamed_csv_reads_as_before(tmp_path: Path) -> None:
    # quoted cells across lines, CRLF and old-Mac line ends, a BOM: as the whole-file reader read them
    path = tmp_path / "c.csv"
    path.write_bytes(b'\xef\xbb\xbfid,output\r\nc1,"two\nlines"\r\nc2,plain\rc3,"a ""quote"""\n')
    assert [(n, r["id"], r["output"]) for n, r in iter_rows(path)] == [
        (3, "c1", "two\nlines"),
        (4, "c2", "plain"),
        (5, "c3", 'a "quote"'),
    ]


def test_a_bad_byte_far_down_a_csv_is_named_on_its_line(tmp_path: Path) -> None:
    path = tmp_path / "c.csv"
    path.write_bytes(b"id,output\n" + b"".join(b"c%d,ok\n" % i for i in range(5000)) + b"c,caf\xe9\n")
    with pytest.raises(readers.InputError, match=r"c\.csv:5002: not UTF-8"):
        list(iter_rows(path))


def test_a_gzipped_parquet_is_gunzipped_to_a_temporary_file_not_to_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    pa = pytest.importorskip("pyarrow")
    import pyarrow.parquet as pq

    plain = tmp_path / "cases.parquet"
    pq.write_table(pa.table({"id": [f"c{i}" for i in range(1000)], "output": ["x"] * 1000}), plain)
    packed = tmp_path / "cases.parquet.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))

    def whole(path: Path) -> bytes:
        raise AssertionError(f"{path} read whole into memory")

    monkeypatch.setattr(readers, "_read_bytes", whole)
    rows = list(iter_rows(packed))
    assert len(rows) == 1000 and rows[-1] == (1000, {"id": "c999", "output": "x"})
