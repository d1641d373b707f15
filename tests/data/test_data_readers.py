import json
import re
from pathlib import Path

import pytest

from juge.data.readers import read_cases, read_labels, records_hash, sample, split_by_group
from juge.data.records import Case, Judgment
from juge.errors import InputError


def write(path: Path, text: str | bytes) -> Path:
    if isinstance(text, bytes):
        path.write_bytes(text)
    else:
        path.write_text(text, encoding="utf-8")
    return path


def test_reads_jsonl_with_unknown_fields_into_meta(tmp_path):
    p = write(
        tmp_path / "c.jsonl",
        '{"id": "a", "question": "q", "output": "o", "shop": "x"}\n\n{"id": 2, "question": "q2"}\n',
    )
    cases = read_cases(p)
    assert [c.id for c in cases] == ["a", "2"]
    assert cases[0].meta == {"shop": "x"}
    assert cases[0].group == "a"  # the group defaults to the id


def test_multi_turn_conversation(tmp_path):
    row = {
        "id": "t2",
        "messages": [
            {"role": "user", "content": "hi"},
            {"role": "assistant", "content": "hello"},
            {"role": "user", "content": "and?"},
        ],
        "output": "more",
    }
    cases = read_cases(write(tmp_path / "c.jsonl", json.dumps(row) + "\n"))
    assert [m.role for m in cases[0].conversation()] == ["user", "assistant", "user"]


def test_csv_with_mapping_and_json_cells(tmp_path):
    p = write(
        tmp_path / "c.csv",
        'ticket,prompt,answer,messages\nT1,Where?,Here,"[{""role"": ""user"", ""content"": ""x""}]"\n',
    )
    cases = read_cases(p, {"id": "ticket", "question": "prompt", "output": "answer"})
    assert cases[0].id == "T1" and cases[0].output == "Here"
    assert cases[0].messages[0].content == "x"


@pytest.mark.parametrize(
    "content, expected",
    [
        ('{"id": "a"}\n{"id": "b", \n', "c.jsonl:2: malformed JSON"),
        ('{"id": "a"}\n{"question": "x"}\n', "c.jsonl:2: field 'id': required field is missing"),
        ('{"id": "a"}\n{"id": "a"}\n', "c.jsonl:2: field 'id': duplicate id 'a' (first on line 1)"),
        ('{"id": "a", "question": [5]}\n', "c.jsonl:1: field 'question'"),
        ('{"id": "a", "messages": [{"role": "robot", "content": "x"}]}\n', "c.jsonl:1: field 'messages.0.role'"),
        ("   \n", "c.jsonl: file is empty"),
        ('["a"]\n', "c.jsonl:1: expected a JSON object"),
        (
            '{"id": "a", "output": "x"}\n{"id": "b", "output_1": "x"}\n',
            "c.jsonl:2: output_1 is given without output_2",
        ),
        ('{"id": "a", "output_2": "x"}\n', "c.jsonl:1: output_2 is given without output_1"),
    ],
)
def test_bad_cases_name_file_line_field(tmp_path, content, expected):
    p = write(tmp_path / "c.jsonl", content)
    with pytest.raises(InputError) as exc:
        read_cases(p)
    assert expected in str(exc.value)


def test_non_utf8_names_the_line(tmp_path):
    p = write(tmp_path / "c.jsonl", b'{"id": "a"}\n{"id": "caf\xe9"}\n')
    with pytest.raises(InputError, match=r"c.jsonl:2: not UTF-8"):
        read_cases(p)


def test_csv_ragged_row(tmp_path):
    p = write(tmp_path / "c.csv", "id,question\na,q\nb,q,extra\n")
    with pytest.raises(InputError, match=r"c.csv:3: more values than header"):
        read_cases(p)


def test_labels_outside_declared_set(tmp_path):
    p = write(
        tmp_path / "l.jsonl",
        '{"item_id": "a", "rater_id": "r1", "label": "A"}\n{"item_id": "a", "rater_id": "r2", "label": "D"}\n',
    )
    with pytest.raises(InputError, match=r"l.jsonl:2: field 'label': label 'D' is not one of"):
        read_labels(p, allowed=["A", "B", "tie"])
    assert len(read_labels(p)) == 2


def test_labels_same_rater_twice(tmp_path):
    p = write(
        tmp_path / "l.jsonl",
        '{"item_id": "a", "rater_id": "r1", "label": 1}\n{"item_id": "a", "rater_id": "r1", "label": 2}\n',
    )
    with pytest.raises(InputError, match=r"l.jsonl:2: field 'rater_id'"):
        read_labels(p)


def test_sample_is_seeded_shuffle_not_head():
    items = list(range(100))
    a, b = sample(items, 10, seed=1), sample(items, 10, seed=1)
    assert a == b
    assert a != items[:10]
    assert sample(items, 10, seed=2) != a
    assert sorted(sample(items, None, seed=3)) == items


def test_split_by_group_keeps_groups_together_and_is_stable():
    cases = [Case(id=f"c{i}", group=f"g{i % 17}") for i in range(200)]
    split = split_by_group(cases, holdout=0.5, seed=7)
    dev_groups = {c.group for c in split["dev"]}
    hold_groups = {c.group for c in split["holdout"]}
    assert not dev_groups & hold_groups
    assert dev_groups and hold_groups
    # Stable: adding cases of new groups never moves an existing group.
    more = cases + [Case(id=f"n{i}", group=f"new{i}") for i in range(50)]
    split2 = split_by_group(more, holdout=0.5, seed=7)
    assert {c.id for c in split["dev"]} <= {c.id for c in split2["dev"]}
    assert split_by_group(cases, seed=8)["dev"] != split["dev"]


def test_records_hash_changes_with_content():
    a = [Case(id="a", question="q")]
    assert records_hash(a) == records_hash([Case(id="a", question="q")])
    assert records_hash(a) != records_hash([Case(id="a", question="q!")])


def test_judgment_fails_closed():
    with pytest.raises(ValueError):
        Judgment(item_id="a", judge="j", model="m", template="t", outcome="unparsed", verdict="PASS")


def test_csv_unclosed_quote_names_the_row(tmp_path):
    p = write(tmp_path / "c.csv", 'id,question,output\na,"unterminated,x\nb,q,o\n')
    with pytest.raises(InputError, match=r"c.csv:2: malformed CSV"):
        read_cases(p)


def test_ok_judgment_needs_a_verdict():
    with pytest.raises(ValueError, match="must carry the verdict"):
        Judgment(item_id="a", judge="j", model="m", template="t", outcome="ok")


def test_mapping_typos_are_errors(tmp_path):
    p = write(tmp_path / "c.csv", "ticket,prompt\nT1,Where?\n")
    with pytest.raises(InputError, match="'bogus', which is not a juge field"):
        read_cases(p, {"id": "ticket", "bogus": "prompt"})
    with pytest.raises(InputError, match="from column 'nope', which no row of the file has"):
        read_cases(p, {"id": "ticket", "context": "nope"})


def test_parse_mapping():
    from juge.data.readers import parse_mapping

    assert parse_mapping("id=ticket, output = reply") == {"id": "ticket", "output": "reply"}
    assert parse_mapping(None) is None
    with pytest.raises(InputError, match="--map: expected"):
        parse_mapping("id:ticket")


@pytest.mark.parametrize(
    "name, content", [("c.csv", "id,meta\na,plain text\n"), ("c.jsonl", '{"id": "a", "meta": "[1, 2]"}\n')]
)
def test_meta_must_be_an_object(tmp_path, name, content):
    with pytest.raises(InputError, match=r":2: field 'meta'|:1: field 'meta'"):
        read_cases(write(tmp_path / name, content))


def test_a_folder_is_not_a_cases_file(tmp_path):
    with pytest.raises(InputError, match="is a folder"):
        read_cases(tmp_path)


@pytest.mark.parametrize(
    ("last", "column"),
    [
        ('{"id": "b", "question": "cut off here', (38, 25)),  # truncated in a string: its end (or its start at EOF)
        ('{"id": "b", "question": "q"', (28, 28)),  # the closing brace missing
        ('{"id": "b",, "question": "q"}', (12, 12)),  # inside the line: json's own column
    ],
)
@pytest.mark.parametrize("newline", ["\n", "\r\n", ""])
def test_malformed_json_line_names_the_column_in_that_line(tmp_path, last: str, column: tuple, newline: str) -> None:
    path = write(tmp_path / "late_bad.jsonl", "".join(f'{{"id": "a{k}"}}\n' for k in range(3)) + last + newline)
    with pytest.raises(InputError) as caught:
        read_cases(path)
    assert (caught.value.line, caught.value.field) == (4, None)
    expected = column[0] if newline else column[1]
    assert re.search(rf"\bcolumn {expected}\b", str(caught.value)), str(caught.value)
