"""`--db` names the label store on every label command, as on the rest of juge; `--db-url` still works."""

from __future__ import annotations

import json
from pathlib import Path

import typer
from typer.testing import CliRunner

from juge.cli import app
from juge.commands.label import label_app
from label_helpers import pair_case, write_cases, write_rubric

runner = CliRunner()


def test_every_label_command_takes_db_and_db_url() -> None:
    group = typer.main.get_command(label_app)
    for name, command in group.commands.items():  # type: ignore[attr-defined]
        options = {opt for p in command.params for opt in p.opts}
        assert {"--db", "--db-url"} <= options, name


def test_db_names_the_same_store_as_db_url(tmp_path: Path, monkeypatch) -> None:  # noqa: ANN001
    monkeypatch.delenv("JUGE_LABEL_DB_URL", raising=False)
    monkeypatch.chdir(tmp_path)  # a command that ignored --db would write ./.juge/juge.db here
    path = tmp_path / "labels.db"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(4)])
    rubric = write_rubric(tmp_path / "rubric.toml")

    def juge(*args: str):  # noqa: ANN202
        result = runner.invoke(app, ["label", *args])
        assert result.exit_code == 0, result.output
        return result

    juge("init", "q", "--cases", str(cases), "--task", "pairwise", "--rubric", str(rubric), "--db", str(path))
    assert path.exists()
    juge("add-rater", "q", "ann", "--db-url", f"sqlite:///{path}")
    juge("add-rater", "q", "bob", "--db", str(path))
    by_path = json.loads(juge("status", "q", "--db", str(path), "--json", "-").output)
    by_url = json.loads(juge("status", "q", "--db-url", f"sqlite:///{path}", "--json", "-").output)
    assert by_path == by_url
    assert sorted(r["rater"] for r in by_path["raters"]) == ["ann", "bob"]
    assert not (tmp_path / ".juge").exists()
