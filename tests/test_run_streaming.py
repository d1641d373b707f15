"""`juge run` never holds a run whole: no call reads every case, judgment or check of a run at
once, and the engine pulls tasks from a generator only as workers free up."""

import asyncio
import json
from pathlib import Path

import pytest

from juge.config import load_eval
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, iter_tasks
from juge.judges import judge_from_dict
from juge.providers import make_provider
from juge.runner import run_eval
from juge.store import Store

WHOLE_RUN_READS = ("run_cases", "judgments", "done_keys", "check_results")


def write_eval(tmp_path: Path, n: int, system: bool) -> Path:
    rows = [{"id": f"c{i}", "question": f"q{i}", "output": f"o{i}"} for i in range(n)]
    rows.append({"id": "pair", "question": "q", "output_1": "x", "output_2": "y"})
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    (tmp_path / "sys.j2").write_text("Customer: {{ input }}")
    system_block = (
        '[system]\nmodel = "s"\ntemplate = "sys.j2"\nprovider = { name = "scripted", options = { default = "hi" } }\n'
        if system
        else ""
    )
    path = tmp_path / "eval.toml"
    path.write_text(
        f"""cases = "cases.jsonl"
{system_block}
[[checks]]
kind = "length"
max_chars = 100
[[judges]]
name = "pf"
setup = "passfail"
description = "ok?"
model = "m"
provider = "scripted"
provider_options = {{ default = "PASS\\nfine" }}
[[judges]]
name = "pair"
setup = "pairwise"
description = "better?"
model = "m"
provider = "scripted"
provider_options = {{ default = "[[A]]" }}
[engine]
concurrency = 3
"""
    )
    return path


# held: the plan keeps the cases and prompts it checked (juge.runs.plan.PREPARED_BYTES); a larger run, or one with a
# system under test, reads its cases back from the store.
@pytest.mark.parametrize(("system", "held"), [(False, True), (False, False), (True, False)])
def test_run_and_resume_read_the_store_a_page_at_a_time(tmp_path: Path, monkeypatch, system: bool, held: bool) -> None:
    config = load_eval(write_eval(tmp_path, 1200, system))
    if not held:
        monkeypatch.setattr("juge.runs.plan.PREPARED_BYTES", 0)
    for name in WHOLE_RUN_READS:

        def refuse(*_a, _name=name, **_k):
            raise AssertionError(f"Store.{_name} reads a whole run")

        monkeypatch.setattr(Store, name, refuse)
    outputs = Store.outputs

    def outputs_of_a_page(self, run_id, item_ids=None):
        assert item_ids is not None, "Store.outputs reads a whole run"
        return outputs(self, run_id, item_ids)

    monkeypatch.setattr(Store, "outputs", outputs_of_a_page)
    monkeypatch.setattr("juge.data.readers.read_cases", lambda *a, **k: pytest.fail("read_cases holds the file"))
    with Store(tmp_path / "j.db") as store:
        first = run_eval(config, store, progress=False)
        assert first.stored_now == 1202 and first.summary["cases_passed"] == 1201  # the pair passes its checks
        # as if killed part-way: the resumed run judges only what is missing, page by page
        store.conn.execute("DELETE FROM judgments WHERE item_id IN ('c5', 'c1100', 'pair')")
        store.conn.execute("UPDATE runs SET status = 'running'")
        again = run_eval(config, store, progress=False)
    assert again.run_id == first.run_id and again.resumed
    assert again.stored_now == 4 and again.engine_stats.get("calls", 0) == 0  # the cache answers
    assert (again.summary["n_cases"], again.summary["cases_passed"]) == (1201, 1201)
    assert again.summary["judges"]["pair"]["pair_verdicts"]["inconsistent"] == 1  # [[A]] in both orders


def test_the_engine_pulls_tasks_only_as_workers_free_up(tmp_path: Path) -> None:
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "ok?", "model": "m"})
    provider = make_provider("scripted", default="PASS\nfine", delay=0.001)
    pulled, stored_when_pulled = [], []
    with Store(tmp_path / "j.db") as store:
        cases = [Case(id=f"c{i}", question="q", output="o") for i in range(2000)]
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)

        def tasks():
            for task in iter_tasks(cases, [judge]):
                pulled.append(task.case.id)
                stored_when_pulled.append(store.count_judgments(run_id))
                yield task

        engine = Engine(store, EngineOptions(concurrency=4, progress=False))
        stored = asyncio.run(engine.run_tasks(run_id, tasks(), {"pf": provider}, total=2000))
    assert stored == 2000 and len(pulled) == 2000
    # a task is read at most a page (256) and the workers' share ahead of what is stored
    assert max(i - done for i, done in enumerate(stored_when_pulled)) <= 256 + 4
