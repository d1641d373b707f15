"""The bad-input corpus: every broken file in tests/bad_inputs/, driven through the command a user would run.

For each one juge must exit 2 with one message that names the file (and the line and field where
there is one), print no traceback, and leave nothing behind: no run in the store, no output file,
no temporary file beside the inputs. tests/bad_inputs/good/ holds the valid companions (a cases
file, a judge, an eval file, items with votes, recorded judgments, labels); `test_good_inputs_pass`
shows that each failure below comes from its one broken file.
"""

from __future__ import annotations

import re
import shutil
import sqlite3
from dataclasses import dataclass
from pathlib import Path

import pytest

from cli_helpers import run_cli

CORPUS = Path(__file__).resolve().parents[1] / "bad_inputs"

RUN = ("run", "--db", "{db}", "--no-progress", "--json", "{out}")
RUN_CASES = (*RUN, "--judge", "good/judge.toml", "--cases")
CALIBRATE = ("calibrate", "--items", "good/items.jsonl", "--resamples", "20", "--json", "{out}")
CALIBRATE_PLAIN = ("calibrate", "--resamples", "20", "--json", "{out}", "--items")


@dataclass(frozen=True)
class BadInput:
    """One broken input: the command that reads it and where the message must point."""

    name: str
    argv: tuple[str, ...]  # {db}, {out}, {outdir}: a fresh store, an output file, its folder
    file: str  # the file the message must name
    line: int | None  # the line it must name, where the input has lines
    field: str | None  # the field it must name, where there is one
    says: str  # what was wrong, in the message's words

    def __str__(self) -> str:
        return self.name


CASES = [
    # cases: JSONL and CSV
    BadInput(
        "cases-invalid-json", (*RUN_CASES, "cases_bad_json.jsonl"), "cases_bad_json.jsonl", 3, None, "malformed JSON"
    ),
    BadInput(
        "cases-missing-id",
        (*RUN_CASES, "cases_missing_id.jsonl"),
        "cases_missing_id.jsonl",
        2,
        "id",
        "required field is missing",
    ),
    BadInput(
        "cases-wrong-type", (*RUN_CASES, "cases_wrong_type.jsonl"), "cases_wrong_type.jsonl", 2, "messages", "list"
    ),
    BadInput(
        "cases-duplicate-id",
        (*RUN_CASES, "cases_duplicate_id.jsonl"),
        "cases_duplicate_id.jsonl",
        3,
        "id",
        "duplicate id 'c1' (first on line 1)",
    ),
    BadInput("cases-empty-file", (*RUN_CASES, "cases_empty.jsonl"), "cases_empty.jsonl", None, None, "empty"),
    BadInput("cases-latin1-csv", (*RUN_CASES, "cases_latin1.csv"), "cases_latin1.csv", 4, None, "not UTF-8"),
    BadInput("cases-utf16-bom-csv", (*RUN_CASES, "cases_utf16.csv"), "cases_utf16.csv", 1, None, "not UTF-8"),
    BadInput(
        "cases-csv-long-row",
        (*RUN_CASES, "cases_ragged.csv"),
        "cases_ragged.csv",
        3,
        None,
        "more values than header columns",
    ),
    BadInput(
        "cases-csv-short-row",
        (*RUN_CASES, "cases_short_row.csv"),
        "cases_short_row.csv",
        3,
        None,
        "fewer values than header columns",
    ),
    BadInput(
        "cases-csv-open-quote", (*RUN_CASES, "cases_open_quote.csv"), "cases_open_quote.csv", 2, None, "unclosed quote"
    ),
    BadInput(
        "cases-map-missing-column",
        (*RUN_CASES, "cases_mapped.csv", "--map", "id=ticket,output=reply"),
        "cases_mapped.csv",
        None,
        "output",
        "column 'reply', which no row of the file has",
    ),
    BadInput(
        "cases-missing-reference",
        (*RUN, "--judge", "judge_needs_reference.toml", "--cases", "good/cases.jsonl"),
        "cases.jsonl",
        1,
        "reference",
        "needs it but the case has none",
    ),
    # human labels
    BadInput(
        "labels-off-scale",
        (*CALIBRATE, "--judgments", "good/judgments.jsonl", "--labels", "labels_off_scale.jsonl"),
        "labels_off_scale.jsonl",
        5,
        "label",
        "'D' is not one of",
    ),
    BadInput(
        "labels-missing-rater",
        (*CALIBRATE, "--judgments", "good/judgments.jsonl", "--labels", "labels_missing_rater.jsonl"),
        "labels_missing_rater.jsonl",
        3,
        "rater_id",
        "required field is missing",
    ),
    BadInput(
        "labels-unknown-items",
        (*CALIBRATE, "--judgments", "good/judgments.jsonl", "--labels", "labels_unknown_items.jsonl"),
        "labels_unknown_items.jsonl",
        None,
        "item_id",
        "matches an item",
    ),
    BadInput(
        "labels-rater-twice",
        (*CALIBRATE, "--judgments", "good/judgments.jsonl", "--labels", "labels_rater_twice.jsonl"),
        "labels_rater_twice.jsonl",
        4,
        "rater_id",
        "labelled item 'i1' twice",
    ),
    # labels and verdicts in other shapes (issue 13): the message names the option to use
    BadInput(
        "labels-pairwise-codes-without-scale",
        (
            *CALIBRATE_PLAIN,
            "pairs_codes_no_scale.csv",
            "--map",
            "id=doc+system,output_1=left,output_2=right",
            "--label-cols",
            "rater_a,rater_b",
        ),
        "pairs_codes_no_scale.csv",
        2,
        "rater_a",
        "values 0, 1, 2 look like pairwise codes: give --kind pairwise --scale",
    ),
    BadInput(
        "labels-null-without-missing",
        (*CALIBRATE_PLAIN, "labels_null_marker.csv", "--label-cols", "r1,r2"),
        "labels_null_marker.csv",
        3,
        "r1",
        "looks like a missing label: give --missing NULL",
    ),
    BadInput(
        "labels-long-unmapped-rater",
        (
            *CALIBRATE_PLAIN,
            "good/cases.jsonl",
            "--labels",
            "labels_long_no_rater.jsonl",
            "--labels-map",
            "item_id=doc,label=verdict",
        ),
        "labels_long_no_rater.jsonl",
        1,
        "rater_id",
        "--labels-map rater_id=COLUMN",
    ),
    BadInput(
        "judgments-map-unknown-column",
        (
            *CALIBRATE,
            "--judgments",
            "judgments_unmapped.csv",
            "--judgments-map",
            "item_id=row,verdict=answer",
        ),
        "judgments_unmapped.csv",
        None,
        "item_id",
        "--judgments-map reads 'item_id' from column 'row'",
    ),
    # eval files
    BadInput("eval-toml-syntax", (*RUN, "eval_syntax.toml"), "eval_syntax.toml", 3, None, "invalid TOML"),
    BadInput(
        "eval-unknown-key",
        (*RUN, "eval_unknown_key.toml"),
        "eval_unknown_key.toml",
        5,
        "engine.concurency",
        "unknown key (did you mean 'concurrency'?)",  # a nested table suggests its own keys
    ),
    BadInput("eval-not-utf8", (*RUN, "eval_latin1.toml"), "eval_latin1.toml", 1, None, "not UTF-8"),
    BadInput(
        "eval-gate-out-of-range",
        (*RUN, "eval_gate.toml"),
        "eval_gate.toml",
        5,
        "gate.min_pass_rate",
        "less than or equal to 1",
    ),
    BadInput(
        "eval-gate-without-pass-rate",
        (*RUN, "eval_gate_no_pass_rate.toml"),
        "eval_gate_no_pass_rate.toml",
        5,
        "gate.min_pass_rate",
        "no check or counted judge gives a pass rate",
    ),
    BadInput(
        "eval-judge-unknown-setup",
        (*RUN, "eval_unknown_setup.toml"),
        "eval_unknown_setup.toml",
        6,
        "judges[0].setup",
        "Input should be 'passfail'",
    ),
    BadInput(
        "eval-check-unknown-option",
        (*RUN, "eval_check_option.toml"),
        "eval_check_option.toml",
        4,
        "checks[0]",
        "unknown option(s) 'colour'",
    ),
    BadInput(
        "eval-missing-cases-file",
        (*RUN, "eval_missing_cases.toml"),
        "eval_missing_cases.toml",
        2,
        "cases",
        "no-such-cases.jsonl",
    ),
    BadInput(
        "eval-template-does-not-render",
        (*RUN, "eval_template_undefined.toml"),
        "eval_template_undefined.toml",
        8,
        "judges[0].template",
        "'case_tier' is undefined",
    ),
    BadInput(
        "eval-template-syntax",
        (*RUN, "eval_template_syntax.toml"),
        "template_syntax.j2",
        4,
        None,
        "template syntax error",
    ),
    BadInput(
        "eval-system-template-does-not-render",
        (*RUN, "eval_system_template.toml"),
        "eval_system_template.toml",
        10,
        "system.template",
        "has no attribute 'city'",
    ),
    BadInput(
        "eval-unknown-provider",
        (*RUN, "eval_unknown_provider.toml"),
        "eval_unknown_provider.toml",
        5,
        "provider.name",
        "openia",
    ),
    # judge files
    BadInput(
        "judge-unknown-key",
        (*RUN, "--judge", "judge_unknown_key.toml", "--cases", "good/cases.jsonl"),
        "judge_unknown_key.toml",
        4,
        "temprature",
        "unknown key",
    ),
    BadInput(
        "judge-toml-syntax",
        (*RUN, "--judge", "judge_syntax.toml", "--cases", "good/cases.jsonl"),
        "judge_syntax.toml",
        3,
        None,
        "invalid TOML",
    ),
    BadInput(
        "judge-missing-name",
        (*RUN, "--judge", "judge_missing_name.toml", "--cases", "good/cases.jsonl"),
        "judge_missing_name.toml",
        None,
        "name",
        "missing",
    ),
    BadInput(
        "judge-unknown-provider",
        (*RUN, "--judge", "judge_unknown_provider.toml", "--cases", "good/cases.jsonl"),
        "judge_unknown_provider.toml",
        4,
        "provider",
        "unknown provider 'antropic'",
    ),
    # recorded judgments: `juge calibrate --judgments` and the replay provider
    BadInput(
        "judgments-invalid-json",
        (*CALIBRATE, "--judgments", "judgments_bad_json.jsonl"),
        "judgments_bad_json.jsonl",
        4,
        None,
        "malformed JSON",
    ),
    BadInput(
        "judgments-pair-without-order",
        (*CALIBRATE, "--judgments", "judgments_no_order.jsonl"),
        "judgments_no_order.jsonl",
        6,
        "order",
        "item 'i2' is a pair",
    ),
    BadInput(
        "judgments-unknown-outcome",
        (*CALIBRATE, "--judgments", "judgments_unknown_outcome.jsonl"),
        "judgments_unknown_outcome.jsonl",
        3,
        "outcome",
        "'maybe' is not one of",
    ),
    BadInput(
        "judgments-letter-not-abc",
        (*CALIBRATE, "--judgments", "judgments_bad_letter.jsonl"),
        "judgments_bad_letter.jsonl",
        7,
        "letter",
        "'tie' is not A, B or C",
    ),
    BadInput(
        "replay-missing-judge",
        (*RUN, "--replay", "replay_missing_judge.jsonl", "good/eval.toml"),
        "replay_missing_judge.jsonl",
        2,
        "judge",
        "required field is missing",
    ),
    BadInput(
        "replay-is-a-folder",
        (*RUN, "--replay", "good", "good/eval.toml"),
        "good",
        None,
        None,
        "--replay good: is a folder",
    ),
    # labelling projects: `juge label init` reads the cases to label
    BadInput(
        "label-init-missing-id",
        (
            "label",
            "init",
            "--cases",
            "cases_missing_id.jsonl",
            "--task",
            "passfail",
            "--rubric",
            "good/judge.toml",
            "--name",
            "p",
            "--db-url",
            "sqlite:///{db}",
        ),
        "cases_missing_id.jsonl",
        2,
        "id",
        "required field is missing",
    ),
    BadInput(
        "label-init-grade-without-output",
        (
            "label",
            "init",
            "--cases",
            "cases_no_output.csv",
            "--task",
            "passfail",
            "--rubric",
            "good/judge.toml",
            "--name",
            "p",
            "--db-url",
            "sqlite:///{db}",
        ),
        "cases_no_output.csv",
        3,
        "output",
        "case 'c2' has no output to grade",
    ),
    # JSON that juge wrote and a person kept (or cut short): a policy, a calibration result
    BadInput(
        "policy-test-truncated-policy",
        (
            "policy",
            "test",
            "--policy",
            "policy_truncated.json",
            "--items",
            "good/items.jsonl",
            "--judgments",
            "good/judgments.jsonl",
            "--db",
            "{db}",
            "--json",
            "{out}",
        ),
        "policy_truncated.json",
        4,
        None,
        "not valid JSON",
    ),
    BadInput(
        "report-truncated-calibration",
        ("report", "policy_truncated.json", "-o", "{out}"),
        "policy_truncated.json",
        4,
        None,
        "malformed JSON",
    ),
    # output files: checked before the run or the study
    BadInput(
        "run-json-under-a-file",
        ("run", "--db", "{db}", "--no-progress", "--json", "good/cases.jsonl/summary.json", "good/eval.toml"),
        "summary.json",
        None,
        None,
        "good/cases.jsonl is a file, not a folder",
    ),
    BadInput(
        "calibrate-json-is-a-folder",
        (
            "calibrate",
            "--items",
            "good/items.jsonl",
            "--judgments",
            "good/judgments.jsonl",
            "--resamples",
            "20",
            "--json",
            "good",
        ),
        "good",
        None,
        None,
        "is a folder; give a file name",
    ),
    # splitting items
    BadInput(
        "split-missing-group",
        ("split", "--items", "good/cases.jsonl", "--by", "category", "-o", "{outdir}/split.jsonl"),
        "cases.jsonl",
        1,
        "category",
        "no value to split by",
    ),
]


def _files(folder: Path) -> set[str]:
    return {str(p.relative_to(folder)) for p in folder.rglob("*")}


def _rows_in(db: Path) -> int:
    """Rows in every table of the store (runs, calls, cache, labels, projects ...): 0 when nothing was kept.
    The schema version a new store is stamped with is layout, not data."""
    if not db.exists():
        return 0
    with sqlite3.connect(db) as con:
        tables = [
            name
            for (name,) in con.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if name not in {"schema_version", "label_schema_version"}
        ]
        return sum(con.execute(f'SELECT count(*) FROM "{name}"').fetchone()[0] for name in tables)


@pytest.fixture
def corpus(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A copy of the corpus as the working directory (relative paths as a user would type them)."""
    folder = tmp_path / "inputs"
    shutil.copytree(CORPUS, folder)
    monkeypatch.chdir(folder)
    return folder


def _argv(case: BadInput, tmp_path: Path) -> list[str]:
    db, outdir = tmp_path / "store" / "juge.db", tmp_path / "out"
    return [a.format(db=db, out=outdir / "result.json", outdir=outdir) for a in case.argv]


def test_corpus_is_large_and_every_file_is_used() -> None:
    used = {a for case in CASES for a in case.argv} | {case.file for case in CASES}
    broken = {p.name for p in CORPUS.iterdir() if p.is_file()}
    templates = {p for p in broken if p.endswith(".j2")}  # read through the eval files that name them
    assert len(CASES) >= 20 and len({c.name for c in CASES}) == len(CASES)
    assert broken - templates <= used, f"files no case reads: {sorted(broken - templates - used)}"


@pytest.mark.parametrize("case", CASES, ids=str)
def test_bad_input_exits_2_naming_file_line_field(
    case: BadInput, corpus: Path, tmp_path: Path, monkeypatch, capsys
) -> None:
    before = _files(corpus)
    code, out, err = run_cli(monkeypatch, capsys, *_argv(case, tmp_path))
    assert code == 2, f"exit {code}\nstdout:\n{out}\nstderr:\n{err}"
    message = " ".join(err.split())  # the message as one line, however the console wrapped it
    assert "Traceback" not in out + err
    assert message.startswith("error: "), err
    assert case.file in message
    if case.line is not None:
        assert re.search(rf"{re.escape(case.file)}:{case.line}(?!\d)", message), message
    if case.field is not None:
        assert f"field '{case.field}'" in message
    assert case.says in message
    assert _rows_in(tmp_path / "store" / "juge.db") == 0, "the store kept something of a refused input"
    assert not (tmp_path / "out").exists() or not any((tmp_path / "out").iterdir())
    assert _files(corpus) == before, "something was written beside the inputs"


GOOD = [
    ("run-eval", (*RUN, "good/eval.toml")),
    ("run-cases", (*RUN_CASES, "good/cases.jsonl")),
    ("calibrate", (*CALIBRATE, "--judgments", "good/judgments.jsonl", "--labels", "good/labels.jsonl")),
    ("replay", (*RUN, "--replay", "good/replay.jsonl", "good/eval.toml")),
    ("split", ("split", "--items", "good/cases.jsonl", "--by", "group", "-o", "{outdir}/split.jsonl")),
]


@pytest.mark.parametrize("argv", [g[1] for g in GOOD], ids=[g[0] for g in GOOD])
def test_good_inputs_pass(argv: tuple[str, ...], corpus: Path, tmp_path: Path, monkeypatch, capsys) -> None:
    """The companions the corpus runs with are valid: each failure above is its broken file's."""
    case = BadInput("good", argv, "", None, None, "")
    code, out, err = run_cli(monkeypatch, capsys, *_argv(case, tmp_path))
    assert code == 0, f"stdout:\n{out}\nstderr:\n{err}"
    assert any((tmp_path / "out").iterdir())
    if argv[0] == "run":
        with sqlite3.connect(tmp_path / "store" / "juge.db") as con:
            assert con.execute("SELECT count(*) FROM runs").fetchone()[0] == 1


TOML = """name = "bakery"
cases = "cases.jsonl"
provider = { name = "scripted", options = { default = "PASS" } }

[engine]
retries = 2

[[judges]]
name = "a"
setup = "passfail"

[[judges]]
name = "b"
setup = "score"
"""


@pytest.mark.parametrize(
    "field, line",
    [
        ("cases", 2),
        ("engine.retries", 6),
        ("provider.name", 3),
        ("provider.options.default", 3),
        ("judges[0]", 8),
        ("judges[1]", 12),
        ("judges[0].setup", 10),
        ("judges[1].setup", 14),
        ("judges[2]", None),
        ("judges[2].setup", None),  # no third judge
        ("name", 1),  # the top-level `name`, not the ones inside tables or inline tables
        ("judges[0].description", None),  # missing from judges[0]: no line, even though no other judge has one either
        ("seed", None),  # a missing key has no line
        ("engine", 5),  # a top-level table: its header (QA2: a misspelt `[[judge]]` had no line)
        ("judges", 8),
        ("engine.seed", None),
    ],
)
def test_toml_key_line_names_the_line_or_none(field: str, line: int | None) -> None:
    from juge.errors import toml_key_line

    assert toml_key_line(TOML, field) == line


def test_a_key_set_only_in_another_table_does_not_lend_its_line() -> None:
    """judges[0] lacks `description`; judges[1] has one: the error about judges[0] must not point at judges[1]."""
    from juge.errors import toml_key_line

    text = '[[judges]]\nname = "a"\nsetup = "passfail"\n\n[[judges]]\nname = "b"\ndescription = "Is it right?"\n'
    assert toml_key_line(text, "judges[0].description") is None
    assert toml_key_line(text, "judges[1].description") == 7
