"""How results show in a notebook and a terminal (issue 30): a short repr and an HTML table for every public
result, not a 1,000-3,000 character pydantic dump; hostile text escaped; Run fields that agree."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import juge
from cli_helpers import tiny_pairwise_study
from juge.parts import REPR_FIELDS, Part

ROOT = Path(__file__).resolve().parents[1]
BAKERY = ROOT / "examples" / "bakery" / "eval.toml"


@pytest.fixture(scope="module")
def results(tmp_path_factory) -> dict[str, Part]:
    tmp = tmp_path_factory.mktemp("display")
    db = tmp / "j.db"
    run = juge.run(BAKERY, db=db)
    shown = juge.show(run, db=db)
    exported = juge.export(run.run_id, tmp / "out.jsonl", db=db)
    mp = pytest.MonkeyPatch()
    mp.setenv("JUGE_HOME", str(tmp / "home"))
    try:
        options = tiny_pairwise_study(tmp)
        items, judgments, store = options[1], options[3], options[5]
        policy = juge.policy.derive(items=items, judgments=judgments, db=store, resamples=50)
        tested = juge.policy.test(policy, items=items, judgments=judgments, db=store, resamples=50)
    finally:
        mp.undo()
    assert run.summary is not None
    return {
        "Run": run, "RunSummary": run.summary, "ShowResult": shown, "ExportResult": exported,
        "PolicyResult": policy, "HoldoutTest": tested,
    }  # fmt: skip


@pytest.mark.parametrize("name", ["Run", "RunSummary", "ShowResult", "ExportResult", "PolicyResult", "HoldoutTest"])
def test_every_result_shows_short_in_a_terminal_and_as_a_table_in_a_notebook(results, name) -> None:
    result = results[name]
    text = repr(result)
    assert type(result).__name__ == name and text.startswith(f"{name}(")
    assert len(text) < 400, text  # was 1,000-3,000 characters
    assert text.count("=") <= REPR_FIELDS + 2  # a few fields, nested results folded
    page = result._repr_html_()
    assert page.startswith(f"<p><b>juge {name}</b>") and "<table>" in page
    assert len(page) < 6000


def test_headlines_say_the_verdict_first(results) -> None:
    run, tested = results["Run"], results["HoldoutTest"]
    assert run.summary is not None and f"{run.summary.pass_rate:.1%} passing" in run._repr_html_()
    assert (tested.status or "untested").upper() in tested._repr_html_().split("</p>")[0]


def test_hostile_text_is_escaped_and_made_visible() -> None:
    from juge.results import Run

    run = Run(run_id="r1", db="x.db", warnings=["<script>alert(1)</script>", "bidi \u202e here"])
    run.first_error = "<img src=x onerror=alert(1)>\u202e"
    page = run._repr_html_()
    assert "<script>" not in page and "<img" not in page and "\u202e" not in page
    assert "&lt;img" in page and "U+202E" in page


def test_a_reused_run_stores_nothing_new(tmp_path: Path, monkeypatch, capsys) -> None:
    # r.reused=True with stored_now=16 contradicted each other: the new run was dropped with its judgments.
    db = tmp_path / "j.db"
    first = juge.run(BAKERY, db=db)
    again = juge.run(BAKERY, db=db)
    assert first.stored_now == 16 and not first.reused
    assert again.reused and again.stored_now == 0 and again.run_id == first.run_id
    assert json.loads(json.dumps(again.to_dict()))["stored_now"] == 0


@pytest.mark.slow  # a kernel
def test_a_notebook_shows_results_as_tables(tmp_path: Path) -> None:
    import nbformat
    from nbclient import NotebookClient

    nb = nbformat.v4.new_notebook()
    nb.cells = [
        nbformat.v4.new_code_cell(
            f"import juge\nr = await juge.run_async({str(BAKERY)!r}, db={str(tmp_path / 'j.db')!r})"
        ),
        nbformat.v4.new_code_cell("r"),
        nbformat.v4.new_code_cell("r.summary"),
        nbformat.v4.new_code_cell("juge.show(r, db=r.db)"),
    ]
    NotebookClient(nb, timeout=300, kernel_name="python3").execute()
    for cell, name in zip(nb.cells[1:], ("Run", "RunSummary", "ShowResult"), strict=True):
        (shown,) = [o for o in cell.outputs if o.get("output_type") == "execute_result"]
        assert shown["data"]["text/html"].startswith(f"<p><b>juge {name}</b>")
        assert len(shown["data"]["text/plain"]) < 400
