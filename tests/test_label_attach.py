"""`juge label attach-run`: --db names the juge store (--store still works); a run over other cases exits 2."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from juge.cli import app
from juge.data.records import Judgment
from juge.errors import InputError
from juge.store import Store
from label_helpers import pair_case, write_cases, write_rubric


def make_run(path: Path, ids: list[str]) -> str:
    with Store(path) as runs:
        cases = [pair_case(0).model_copy(update={"id": i}) for i in ids]
        run_id = runs.create_run(dataset_hash="h", juge_version="t", cases=cases)
        for i in ids:
            for order, letter in (("12", "A"), ("21", "B")):
                runs.save_judgment(run_id, Judgment(item_id=i, judge="j", model="m", template="t", order=order,
                                                    text=letter, verdict=letter, outcome="ok"))
    return run_id


def test_attach_run_refuses_a_run_over_other_cases_and_reads_db(tmp_path: Path) -> None:
    db_url = f"sqlite:///{tmp_path / 'labels.db'}"
    cases = write_cases(tmp_path / "cases.jsonl", [pair_case(i) for i in range(4)])
    runner = CliRunner()

    def juge(*args: str):  # noqa: ANN202
        return runner.invoke(app, ["label", *args, "--db-url", db_url], env={"COLUMNS": "300"})

    assert juge("init", "--cases", str(cases), "--task", "pairwise", "--rubric", str(write_rubric(tmp_path / "r.toml")),
                "--name", "q4").exit_code == 0
    project_ids = [pair_case(i).id for i in range(4)]
    runs = tmp_path / "runs.db"
    other = make_run(runs, ["x1", "x2"])
    result = juge("attach-run", "q4", other, "--db", str(runs))
    assert result.exit_code == 1 and isinstance(result.exception, InputError)  # juge.cli.main prints it, exit 2
    message = str(result.exception)
    assert f"run {other}" in message and "no case id matches an item of project q4" in message
    assert "'x1', 'x2'" in message
    same = make_run(runs, project_ids[:2])
    result = juge("attach-run", "q4", same, "--db", str(runs))
    assert result.exit_code == 0 and "Attached 2 judge verdicts" in result.output, result.output
    result = juge("attach-run", "q4", same, "--store", str(runs))  # the option's earlier name
    assert result.exit_code == 0 and "Attached 2 judge verdicts" in result.output, result.output
