"""`juge label init --rubric` takes a judge file too: people read the rubric the judge reads."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from juge.cli import app
from juge.errors import InputError
from juge.judges.judge import load_judge
from juge.label.db import LabelStore
from juge.label.rubric import read_rubric
from label_helpers import score_case, write_cases

FAITHFUL_JUDGE = """\
name = "faithful"
setup = "passfail"
description = "Every factual claim is supported by the facts in <context>."
model = "scripted-judge-1"
provider = "scripted"

[provider_options]
default = "PASS\\nFine."
"""


def test_a_judge_file_is_read_as_the_judges_rubric(tmp_path: Path) -> None:
    judge_file = tmp_path / "faithful.toml"
    judge_file.write_text(FAITHFUL_JUDGE, encoding="utf-8")
    db_url = f"sqlite:///{tmp_path / 'l.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [score_case(i) for i in range(3)])
    result = CliRunner().invoke(
        app,
        [
            "label",
            "init",
            "--cases",
            str(cases),
            "--task",
            "passfail",
            "--rubric",
            str(judge_file),
            "--name",
            "pf",
            "--db-url",
            db_url,
        ],
    )
    assert result.exit_code == 0, (result.output, result.exception)
    store = LabelStore(db_url)
    assert store.project("pf").rubric == load_judge(judge_file).rubric
    assert store.project("pf").rubric.description.startswith("Every factual claim")
    store.close()


def test_a_judge_of_another_setup_is_refused_naming_both(tmp_path: Path) -> None:
    judge_file = tmp_path / "faithful.toml"
    judge_file.write_text(FAITHFUL_JUDGE, encoding="utf-8")
    with pytest.raises(InputError) as err:
        read_rubric(judge_file, "pairwise")
    assert "passfail judge" in str(err.value) and "pairwise labelling task" in str(err.value)
    assert "--task passfail" in str(err.value) and str(judge_file) in str(err.value)


def test_a_plain_rubric_with_a_typo_still_names_the_key(tmp_path: Path) -> None:
    rubric = tmp_path / "r.toml"
    rubric.write_text('name = "f"\ndescription = "d"\nlevls = { 1 = "a", 2 = "b" }\n', encoding="utf-8")
    assert read_rubric(_plain(tmp_path), "passfail").name == "f"
    with pytest.raises(InputError, match="levls"):
        read_rubric(rubric, "score")


def _plain(tmp: Path) -> Path:
    path = tmp / "plain.toml"
    path.write_text('name = "f"\ndescription = "Supported by the facts."\n', encoding="utf-8")
    return path


def test_raters_read_the_rubric_without_the_judges_tags(tmp_path: Path) -> None:
    # Issue 30: the rubric shown to raters said "given the shop facts in <context>", judge jargon.
    from fastapi.testclient import TestClient

    from juge.label.app import create_app
    from juge.label.rubric import for_people
    from label_helpers import sign_in

    assert for_people("supported by the facts in <context>; <response_a> vs <response_b>") == (
        "supported by the facts in the context; the first answer vs the second answer"
    )
    assert for_people("a <b>bold</b> <contexts> tag") == "a <b>bold</b> <contexts> tag"  # only the judge's blocks
    judge_file = tmp_path / "faithful.toml"
    judge_file.write_text(FAITHFUL_JUDGE, encoding="utf-8")
    store = LabelStore(f"sqlite:///{tmp_path / 'l.db'}")
    try:
        project = store.create_project(
            "pf", "passfail", read_rubric(judge_file, "passfail"), [score_case(i) for i in range(2)]
        )
        token = store.add_rater(project, "ann")
        client = TestClient(create_app(store), follow_redirects=True)
        assert sign_in(client, token).status_code in (200, 303)
        page = client.get("/item", params={"p": project.id}).text
        assert "supported by the facts in the context." in page
        assert "&lt;context&gt;" not in page
        assert store.project("pf").rubric.description.endswith("in <context>.")  # the judge's rubric is unchanged
    finally:
        store.close()
