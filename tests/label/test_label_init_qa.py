"""`juge label init`: an unknown --task names the option; the MT-Bench sample layout keeps its provenance
`source` out of the raters' page (it is not a document to check against)."""

from __future__ import annotations

import json
from pathlib import Path

from fastapi.testclient import TestClient
from typer.testing import CliRunner

from juge.cli import app
from juge.errors import InputError
from juge.label.app import create_app
from juge.label.db import LabelStore
from label_helpers import sign_in, write_rubric

PROVENANCE = "lmsys/mt_bench_human_judgments@f7d2896d (CC BY 4.0)"


def test_unknown_task_names_the_option_and_the_tasks(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app,
        [
            "label",
            "init",
            "--cases",
            str(tmp_path / "none.jsonl"),
            "--task",
            "pairwse",
            "--rubric",
            str(write_rubric(tmp_path / "r.toml")),
            "--name",
            "q",
            "--db-url",
            f"sqlite:///{tmp_path / 'l.db'}",
        ],
    )
    assert isinstance(result.exception, InputError)
    assert str(result.exception) == "--task: unknown task 'pairwse' (pairwise, score, passfail)"


def test_mtbench_sample_provenance_is_not_shown_to_raters(tmp_path: Path) -> None:
    rows = [
        {
            "item_id": f"mtb-{k}",
            "question_id": k,
            "category": "writing",
            "split": "dev",
            "question": f"Question {k}?",
            "answer_1": f"first {k}",
            "answer_2": f"second {k}",
            "reference": None,
            "model_1": "secret-model-a",
            "model_2": "secret-model-b",
            "source": PROVENANCE,
            "human_ratings": [{"rater_id": "r1", "label": "A"}],
        }
        for k in range(3)
    ]
    cases = tmp_path / "items.jsonl"
    cases.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    db_url = f"sqlite:///{tmp_path / 'l.db'}"
    result = CliRunner().invoke(
        app,
        [
            "label",
            "init",
            "--cases",
            str(cases),
            "--task",
            "pairwise",
            "--rubric",
            str(write_rubric(tmp_path / "r.toml")),
            "--name",
            "q",
            "--map",
            "id=item_id,output_1=answer_1,output_2=answer_2",
            "--db-url",
            db_url,
        ],
    )
    assert result.exit_code == 0, result.output
    assert "MT-Bench sample layout" in result.output
    store = LabelStore(db_url)
    project = store.project("q")
    record = json.loads(store.item_table(project)[0]["record"])
    assert record["source"] is None and record["meta"]["source"] == PROVENANCE
    token = store.add_rater(project, "ann")
    client = TestClient(create_app(store), follow_redirects=False)
    assert sign_in(client, token).status_code == 303
    page = client.get("/item").text
    assert "Question" in page and ("first " in page and "second " in page)
    assert PROVENANCE not in page and "secret-model" not in page and "<summary>Source</summary>" not in page
