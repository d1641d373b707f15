"""A judge that reads a field the cases lack (issue 30): a forgotten `--map` stops the run, a few gaps warn."""

from __future__ import annotations

from pathlib import Path

import pytest

import juge
from cli_helpers import run_cli

JUDGE = (
    'name = "faithful"\nsetup = "passfail"\nprovider = "scripted"\n'
    'description = "Every claim in the response is supported by the facts in <context>."\n'
    '[provider_options]\ndefault = "PASS\\nSupported."\n'
)


def _files(tmp_path: Path, rows: str, judge: str = JUDGE) -> tuple[Path, Path]:
    cases = tmp_path / "support.csv"
    cases.write_text("ticket,ask,reply,facts\n" + rows, encoding="utf-8")
    judge_file = tmp_path / "faithful.toml"
    judge_file.write_text(judge, encoding="utf-8")
    return cases, judge_file


def test_a_field_no_case_has_stops_before_any_call(monkeypatch, capsys, tmp_path: Path) -> None:
    cases, judge = _files(tmp_path, "t1,Hours?,At 8,Open 8-5\nt2,Price?,Five,Cake $5\n")
    db = tmp_path / "j.db"
    code, _, err = run_cli(
        monkeypatch, capsys, "run", "--cases", str(cases), "--map", "id=ticket,question=ask,output=reply",
        "--judge", str(judge), "--db", str(db), "--no-progress",
    )  # fmt: skip
    assert code == 2 and "field 'context'" in err and "--map context=" in err
    assert not db.exists()  # refused before the store was opened
    with pytest.raises(juge.InputError) as caught:
        juge.dry_run(cases=cases, judges=[judge], mapping={"id": "ticket", "question": "ask", "output": "reply"})
    assert caught.value.field == "context"


def test_gaps_and_empty_answers_are_counted_in_the_warnings(monkeypatch, capsys, tmp_path: Path) -> None:
    cases, judge = _files(tmp_path, 't1,Hours?,At 8,Open 8-5\nt2,Price?," ",\nt3,Cake?,Yes,\nt4,Bread?,No,Rye\n')
    mapping = {"id": "ticket", "question": "ask", "output": "reply", "context": "facts"}
    planned = juge.dry_run(cases=cases, judges=[judge], mapping=mapping)
    run = juge.run(cases=cases, judges=[judge], mapping=mapping, db=tmp_path / "j.db")
    for warnings in (planned.warnings, run.warnings):
        lacking = [w for w in warnings if "context" in w]
        empty = [w for w in warnings if "empty answer" in w]
        assert len(lacking) == 1 and "2 of 4" in lacking[0]
        assert len(empty) == 1 and empty[0].startswith("1 of 4")


def test_a_rubric_that_names_no_block_and_full_cases_warn_nothing(tmp_path: Path) -> None:
    plain = JUDGE.replace("the facts in <context>", "the question")
    cases, judge = _files(tmp_path, "t1,Hours?,At 8,\nt2,Price?,Five,\n", plain)
    planned = juge.dry_run(cases=cases, judges=[judge], mapping={"id": "ticket", "question": "ask", "output": "reply"})
    assert planned.warnings == []


def test_a_custom_template_that_uses_a_field_counts_as_reading_it(tmp_path: Path) -> None:
    from juge.judges.judge import judge_from_dict

    template = tmp_path / "t.j2"
    template.write_text(
        "{% block system %}Judge.{% endblock %}{% block user %}{{ source }}\\n{{ response }}\\nPASS or FAIL?{% endblock %}",
        encoding="utf-8",
    )
    custom = judge_from_dict(
        {"name": "j", "setup": "passfail", "description": "Good?", "template": str(template)}, base_dir=tmp_path
    )
    assert set(custom.case_fields()) == {"source"}
    builtin = judge_from_dict({"name": "j", "setup": "passfail", "description": "Good?"})
    assert builtin.case_fields() == {}
