"""A run's case selection, checked and drawn while streaming the file: the same cases, order-free
identity and errors as reading the file whole (`read_cases` + `sample`)."""

import hashlib
import json
from pathlib import Path

import pytest

from juge.data.readers import read_cases, sample
from juge.data.selection import select_cases
from juge.errors import InputError


def write(path: Path, rows: list[dict]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def old_digest(ids: list[str]) -> str:
    return hashlib.sha256(",".join(sorted(ids)).encode()).hexdigest()


@pytest.fixture
def cases_file(tmp_path: Path) -> Path:
    # ids whose code-point order differs from their file order, some non-ASCII
    ids = ["b", "a10", "a9", "Z", "é", "ß", "a", "case-2", "case-10", "日本"] + [f"x{i}" for i in range(40)]
    return write(tmp_path / "cases.jsonl", [{"id": i, "question": f"q {i}", "output": "o"} for i in ids])


def test_whole_file_identity_is_the_sorted_ids(cases_file: Path) -> None:
    selection = select_cases(cases_file, None, only=None, sample=None, seed=0)
    cases = read_cases(cases_file)
    assert selection.count == len(cases)
    assert [c.id for c in selection] == [c.id for c in cases]
    assert selection.ids_digest.hexdigest() == old_digest([c.id for c in cases])


@pytest.mark.parametrize("n", [1, 7, 49, 50, 500])
@pytest.mark.parametrize("seed", [0, 3])
def test_a_sample_draws_the_cases_sample_draws(cases_file: Path, n: int, seed: int) -> None:
    only = {c.id for c in read_cases(cases_file)} - {"a9", "x3", "x17"}
    selection = select_cases(cases_file, None, only=only, sample=n, seed=seed)
    expected = sample([c for c in read_cases(cases_file) if c.id in only], n, seed=seed)
    assert sorted(c.id for c in selection) == sorted(c.id for c in expected)
    assert selection.count == len(expected)
    assert selection.ids_digest.hexdigest() == old_digest([c.id for c in expected])


def test_a_duplicate_id_names_both_lines(tmp_path: Path) -> None:
    path = write(
        tmp_path / "c.jsonl", [{"id": "a", "question": "q"}, {"id": "b", "question": "q"}, {"id": "a", "question": "q"}]
    )
    with pytest.raises(InputError) as err:
        select_cases(path, None, only=None, sample=None, seed=0)
    with pytest.raises(InputError) as whole:
        read_cases(path)
    assert str(err.value) == str(whole.value)
    assert ":3:" in str(err.value) and "line 1" in str(err.value)


def test_only_naming_unknown_ids_is_an_error(cases_file: Path) -> None:
    with pytest.raises(InputError, match="nope"):
        select_cases(cases_file, None, only={"a", "nope"}, sample=None, seed=0)


def test_a_mapping_to_a_missing_column_is_reported_before_row_errors(tmp_path: Path) -> None:
    path = write(tmp_path / "c.jsonl", [{"ticket": "a", "question": "q"}, {"ticket": "b"}])
    for mapping in ({"id": "ticket", "output": "reply"}, {"idd": "ticket"}):
        with pytest.raises(InputError) as streamed:
            select_cases(path, mapping, only=None, sample=None, seed=0)
        with pytest.raises(InputError) as whole:
            read_cases(path, mapping)
        assert str(streamed.value) == str(whole.value)
