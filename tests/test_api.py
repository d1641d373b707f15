"""The Python API: the notebook runs inside a running event loop and its figures equal the CLI's; the one-liner
on the embedded sample prints what `juge demo` wrote; every API function returns a typed result."""

from __future__ import annotations

import asyncio
import json
import shutil
import subprocess
import sys
from pathlib import Path

import nbformat
import pandas as pd
import pytest
from nbclient import NotebookClient

import juge
from cli_helpers import run_cli, write_jsonl
from juge.results import Calibration, Comparison, Estimate, EstimateResult, Run

ROOT = Path(__file__).resolve().parents[1]
EXAMPLES = ROOT / "examples"
BAKERY = EXAMPLES / "bakery" / "eval.toml"


@pytest.fixture(scope="module")
def demo_json(tmp_path_factory) -> dict:
    """calibration.json as `juge demo` writes it (default resamples)."""
    out = tmp_path_factory.mktemp("demo")
    mp = pytest.MonkeyPatch()

    class Capture:  # run_cli wants capsys; a module fixture has none
        def readouterr(self):
            return "", ""

    try:
        code, _, _ = run_cli(mp, Capture(), "demo", "--out", str(out))
    finally:
        mp.undo()
    assert code == 0
    return json.loads((out / "calibration.json").read_text(encoding="utf-8"))


@pytest.mark.slow  # two full demo studies (2,000 resamples each)
def test_the_one_liner_prints_the_demo_ceiling(demo_json) -> None:
    code = (
        "import juge; c = juge.calibrate(items=juge.demo_path('items.jsonl'), "
        "judgments=juge.demo_path('judgments.jsonl')).ceiling.agreement; print(c); print(repr(c.value))"
    )
    proc = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, check=True)
    printed, value = proc.stdout.splitlines()
    expected = demo_json["ceiling"]["agreement"]
    assert float(value) == expected["value"]
    assert (
        printed
        == Estimate(**expected).fmt()
        == f"{expected['value']:.3f} [{expected['low']:.3f}, " + (f"{expected['high']:.3f}] n={expected['n']}")
    )


@pytest.mark.slow  # a kernel, the demo study and a run
def test_the_notebook_runs_in_a_running_loop_and_equals_the_cli(demo_json, monkeypatch, capsys, tmp_path) -> None:
    nb = nbformat.read(EXAMPLES / "python_api.ipynb", as_version=4)
    NotebookClient(nb, timeout=600, kernel_name="python3", resources={"metadata": {"path": str(EXAMPLES)}}).execute()
    (cell,) = [c for c in nb.cells if "figures" in c.get("metadata", {}).get("tags", [])]
    figures = json.loads("".join(o["text"] for o in cell.outputs if o.get("name") == "stdout"))
    assert figures["calibration"]["ceiling"] == demo_json["ceiling"]
    assert figures["calibration"]["judges"] == {k: v["vs_people"] for k, v in demo_json["judges"].items()}
    shutil.copytree(EXAMPLES / "bakery", tmp_path / "bakery")
    code, _, err = run_cli(
        monkeypatch, capsys, "run", str(tmp_path / "bakery" / "eval.toml"), "--db", str(tmp_path / "j.db"),
        "--json", str(tmp_path / "run.json"), "--no-progress",
    )  # fmt: skip
    assert code == 0, err
    cli_run = json.loads((tmp_path / "run.json").read_text(encoding="utf-8"))
    assert figures["run"] == {k: v for k, v in cli_run.items() if k not in ("run_id", "engine", "calls")}
    assert figures["run"]["n_cases"] == 8 and figures["run"]["checks"]


def test_calibrate_takes_paths_dataframes_and_rows_alike() -> None:
    items = [json.loads(line) for line in juge.demo_path("items.jsonl").read_text().splitlines() if line.strip()]
    calls = [json.loads(line) for line in juge.demo_path("judgments.jsonl").read_text().splitlines() if line.strip()]
    options = {"resamples": 50, "judges": ["chat-small"]}
    from_paths = juge.calibrate(
        items=juge.demo_path("items.jsonl"), judgments=juge.demo_path("judgments.jsonl"), **options
    )
    from_rows = juge.calibrate(items=items, judgments=calls, **options)
    from_frames = juge.calibrate(items=pd.DataFrame(items), judgments=pd.DataFrame(calls), **options)
    assert isinstance(from_rows, Calibration)
    for other in (from_rows, from_frames):
        assert other.ceiling == from_paths.ceiling
        assert other.to_dict()["judges"] == from_paths.to_dict()["judges"]


def test_to_dict_is_what_calibrate_json_writes(monkeypatch, capsys, tmp_path) -> None:
    items, judgments = juge.demo_path("items.jsonl"), juge.demo_path("judgments.jsonl")
    cal = juge.calibrate(items=items, judgments=judgments, resamples=50)
    code, _, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(judgments),
        "--resamples", "50", "--json", str(tmp_path / "c.json"),
    )  # fmt: skip
    assert code == 0, err
    assert cal.to_dict() == json.loads((tmp_path / "c.json").read_text(encoding="utf-8"))
    assert cal.headlines and cal.to_dict()["headline"] == cal.headlines


def test_bad_rows_are_input_errors_naming_the_argument() -> None:
    with pytest.raises(juge.InputError, match=r"^labels\[1\]: expected a record \(a dict\), got str"):
        juge.calibrate(
            items=juge.demo_path("items.jsonl"), labels=[{"item_id": "x", "rater_id": "r", "label": "A"}, "oops"]
        )
    with pytest.raises(juge.InputError, match=r"^items\[0\]\.id: "):
        juge.calibrate(items=[{"no_id": 1}], judgments=[{"item_id": "x"}])
    with pytest.raises(juge.InputError, match="items: give a file path"):
        juge.calibrate(items={"id": "a"}, judgments=juge.demo_path("judgments.jsonl"))


def test_tables_in_memory_are_read_as_rows_without_a_temporary_file(monkeypatch) -> None:
    import tempfile

    def no_temp_file(*args, **kwargs):
        raise AssertionError("a table in memory was written to a temporary file")

    for name in ("TemporaryDirectory", "NamedTemporaryFile", "mkstemp", "mkdtemp", "TemporaryFile"):
        monkeypatch.setattr(tempfile, name, no_temp_file)
    items = [json.loads(line) for line in juge.demo_path("items.jsonl").read_text().splitlines() if line.strip()]
    calls = [json.loads(line) for line in juge.demo_path("judgments.jsonl").read_text().splitlines() if line.strip()]
    cal = juge.calibrate(items=pd.DataFrame(items), judgments=calls, resamples=20, judges=["chat-small"])
    assert cal.n_items > 0 and cal.ceiling.agreement.n > 0
    items[3]["question"] = 42  # not text
    with pytest.raises(juge.InputError, match=r"^items\[3\]\.question: ") as caught:
        juge.calibrate(items=items, judgments=calls, resamples=20)
    assert (caught.value.path, caught.value.line, caught.value.field) == ("items", 4, "question")


def test_run_compare_estimate_and_report_return_typed_results(tmp_path) -> None:
    db = tmp_path / "j.db"

    async def both() -> tuple[Run, Run]:
        first = await juge.run_async(BAKERY, db=db)
        return first, juge.run(BAKERY, db=db)  # the sync form inside a running loop works too

    first, second = asyncio.run(both())
    assert isinstance(first, Run) and first.summary.n_cases == 8 and second.engine_stats.get("calls", 0) == 0
    assert second.summary.pass_rate == first.summary.pass_rate
    compared = juge.compare(first.run_id, second.run_id, db=db, threshold=2, resamples=100)
    assert isinstance(compared, Comparison) and compared.transitions.pass_to_fail == 0 and not compared.changed
    ids = [json.loads(line)["id"] for line in (BAKERY.parent / "cases.jsonl").read_text().splitlines() if line]
    labels = write_jsonl(tmp_path / "l.jsonl", [{"item_id": i, "rater_id": "r", "label": "PASS"} for i in ids])
    estimated = juge.estimate(first.run_id, labels, db=db, threshold=2, resamples=100)
    assert isinstance(estimated, EstimateResult) and estimated.human_only.value == 1.0
    from_rows = juge.estimate(first.run_id, [{"item_id": i, "rater_id": "r", "label": "PASS"} for i in ids], db=db,
                              threshold=2, resamples=100)  # fmt: skip
    assert from_rows.ppi == estimated.ppi
    # The README passes the Run objects juge.run returns; they used to reach SQLite and fail to bind.
    assert juge.compare(first, second, db=db, threshold=2, resamples=100) == compared
    assert juge.estimate(first, labels, db=db, threshold=2, resamples=100) == estimated
    path = juge.report(juge.demo(resamples=20), tmp_path / "r.md")
    assert path.read_text(encoding="utf-8").startswith("#")


def test_load_judge_and_get_provider() -> None:
    judge = juge.load_judge(BAKERY.parent / "judges" / "faithful.toml")
    assert judge.setup == "passfail" and judge.template_hash
    with pytest.raises(juge.InputError, match="unknown provider"):
        juge.get_provider("no-such-provider")


def test_import_juge_stays_cheap() -> None:
    code = "import sys, juge; print(sorted(m for m in ('numpy', 'scipy', 'juge.api', 'rich') if m in sys.modules))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.strip() == "[]"


def test_policy_derive_and_test_return_typed_results(tmp_path, monkeypatch, capsys) -> None:
    from cli_helpers import tiny_pairwise_study
    from juge.results import HoldoutTest, PolicyResult

    monkeypatch.setenv("JUGE_HOME", str(tmp_path / "home"))  # the holdout registry of this test alone
    options = tiny_pairwise_study(tmp_path)
    items, judgments, db = options[1], options[3], options[5]
    policy = juge.policy.derive(items=items, judgments=judgments, db=db, resamples=100)
    assert isinstance(policy, PolicyResult) and policy.to_dict()["policy_hash"] == policy.policy_hash
    (tmp_path / "policy.json").write_text(json.dumps(policy.to_dict()), encoding="utf-8")
    code, _, err = run_cli(
        monkeypatch, capsys, "policy", "test", "--policy", str(tmp_path / "policy.json"), *options,
        "--json", str(tmp_path / "cli.json"),
    )  # fmt: skip
    assert code == 0, err
    again = juge.policy.test(policy, items=items, judgments=judgments, db=db, resamples=100, force=True)
    assert isinstance(again, HoldoutTest)
    cli = json.loads((tmp_path / "cli.json").read_text(encoding="utf-8"))
    assert again.n_items == cli["n_items"] and again.decisions == cli["decisions"]
