"""A run's own event loop is uvloop's where installed; a caller's running loop is never replaced."""

from __future__ import annotations

import asyncio
import threading
from pathlib import Path

import pytest

import juge
from juge import fastjson
from juge.engine.loop import loop_factory, run_loop

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery" / "eval.toml"


async def loop_module() -> str:
    return type(asyncio.get_running_loop()).__module__


def test_a_run_s_own_loop_is_uvloop_s(monkeypatch):
    pytest.importorskip("uvloop")
    monkeypatch.setattr(fastjson, "enabled", True)
    policy = asyncio.get_event_loop_policy()
    assert run_loop(loop_module()).startswith("uvloop")
    assert asyncio.get_event_loop_policy() is policy  # no global policy installed


def test_juge_fast_0_keeps_asyncio_s_loop(monkeypatch):
    monkeypatch.setattr(fastjson, "enabled", False)
    assert loop_factory() is None
    assert run_loop(loop_module()).startswith("asyncio")


def test_juge_run_inside_a_running_loop_leaves_that_loop_alone(tmp_path):
    seen: dict[str, object] = {}

    async def caller() -> juge.Run:
        mine = asyncio.get_running_loop()
        run = juge.run(BAKERY, db=tmp_path / "j.db")  # judged on a loop of its own, in another thread
        seen["same loop"] = asyncio.get_running_loop() is mine
        seen["thread"] = threading.current_thread() is threading.main_thread()
        return run

    run = asyncio.run(caller())
    assert run.summary.n_cases == 8 and seen == {"same loop": True, "thread": True}


def test_a_run_leaves_its_start_objects_out_of_the_collector_s_passes_and_puts_them_back(monkeypatch):
    import gc

    from juge.engine.loop import frozen_heap

    monkeypatch.setattr(fastjson, "enabled", True)
    if gc.get_freeze_count():
        pytest.skip("this process froze objects before the test (a plugin's gc.freeze)")
    with frozen_heap():
        frozen = gc.get_freeze_count()
    assert frozen > 0 and gc.get_freeze_count() == 0
    gc.freeze()  # a caller's own freeze (a forking server's) is left as it is
    try:
        mine = gc.get_freeze_count()
        with frozen_heap():
            assert gc.get_freeze_count() == mine
        assert gc.get_freeze_count() == mine
    finally:
        gc.unfreeze()
    monkeypatch.setattr(fastjson, "enabled", False)  # JUGE_FAST=0: the collector as it is
    with frozen_heap():
        assert gc.get_freeze_count() == 0


def test_the_engine_runs_with_its_start_objects_frozen(tmp_path):
    import gc

    from juge.data.records import Case
    from juge.engine import Engine, EngineOptions, build_tasks
    from juge.judges import judge_from_dict
    from juge.providers.scripted import ScriptedProvider
    from juge.store import Store

    if gc.get_freeze_count():
        pytest.skip("this process froze objects before the test (a plugin's gc.freeze)")
    seen = []

    def answer(request):
        seen.append(gc.get_freeze_count())
        return "PASS\nIt does."

    judge = judge_from_dict({"name": "j", "setup": "passfail", "model": "scripted-1", "description": "Helps."})
    tasks = build_tasks([Case(id=f"c{i}", question="Q?", output=f"A {i}") for i in range(3)], [judge])
    with Store(tmp_path / "j.db") as store:
        run_id = store.create_run(dataset_hash="h", juge_version="t", cases=[t.case for t in tasks])
        engine = Engine(store, EngineOptions(concurrency=2, progress=False))
        stored = asyncio.run(engine.run_tasks(run_id, tasks, {"j": ScriptedProvider(fn=answer)}))
    assert stored == 3 and len(seen) == 3
    assert all(count > 0 for count in seen) == fastjson.enabled and gc.get_freeze_count() == 0
