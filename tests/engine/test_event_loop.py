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
