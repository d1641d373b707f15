"""Rate budgets and adaptive concurrency (juge.limits), on a simulated clock that runs fast."""

import asyncio

import pytest

from juge.limits import WINDOW, Adaptive, Budget, Clock
from juge.providers.base import Request


def request(chars: int = 400, max_tokens: int | None = 100) -> Request:
    return Request(messages=({"role": "user", "content": "x" * chars},), model="m", max_tokens=max_tokens)


def max_in_any_window(times: list[float], weights: list[float] | None = None) -> float:
    weights = weights or [1.0] * len(times)
    return max(sum(w for t, w in zip(times, weights) if start <= t < start + WINDOW) for start in times)


def test_requests_per_minute_are_never_exceeded_and_the_limit_is_used() -> None:
    async def main() -> list[float]:
        clock = Clock(scale=240)  # a simulated minute in 0.25 s
        budget = Budget(rpm=10, tpm=None, clock=clock, margin=0.0)
        times = []
        for _ in range(35):
            times.append((await budget.admit(request())).at)
        return times

    times = asyncio.run(main())
    assert max_in_any_window(times) == 10
    # 35 requests at 10 a minute: the last goes in the fourth minute, not later
    assert 3 * WINDOW <= times[-1] < 3 * WINDOW + 15  # a sleep overshoots by a little


def test_tokens_are_estimated_before_and_corrected_from_usage() -> None:
    async def main() -> tuple[Budget, list[float]]:
        budget = Budget(rpm=None, tpm=1000, clock=Clock(scale=120), margin=0.0)
        first = [await budget.admit(request()) for _ in range(5)]  # 400 chars / 4 + 100 = 200 each
        assert budget.tokens == pytest.approx(1000)
        for spend in first:  # the server counted 50 prompt tokens and 10 of answer
            budget.settle(spend, request(), 50, 10)
        assert budget.tokens == pytest.approx(300)
        sixth = await budget.admit(request())  # fits at once now
        return budget, [s.at for s in first] + [sixth.at]

    budget, times = asyncio.run(main())
    assert times[-1] < WINDOW / 2  # simulated seconds: it did not wait for the first ones to leave the window
    # the prompt estimate learnt that this server counts fewer tokens than chars / 4
    assert 0.5 < budget.prompt_factor < 1.0
    assert budget.estimate(request()) < 200


def test_a_request_larger_than_the_token_budget_waits_for_an_empty_window_then_goes_alone() -> None:
    async def main() -> list[float]:
        budget = Budget(rpm=None, tpm=100, clock=Clock(scale=1200), margin=0.0)
        a = await budget.admit(request(chars=40, max_tokens=50))
        b = await budget.admit(request(chars=4000, max_tokens=50))
        return [a.at, b.at]

    a, b = asyncio.run(main())
    assert b - a >= WINDOW


def test_aimd_halves_on_a_429_at_most_once_a_round_and_grows_back_by_about_one_a_round() -> None:
    async def main() -> None:
        clock = Clock(scale=1.0)
        gate = Adaptive(16, clock)
        for _ in range(16):
            await gate.acquire()
        gate.release(throttled=True, latency=10.0)
        gate.release(throttled=True, latency=10.0)  # same round: one decrease for a burst of 429s
        assert (gate.limit, gate.decreases) == (8.0, 1)
        # 14 still in flight over a limit of 8: a new request waits until the count drops below it
        waiter = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0.01)
        assert not waiter.done()
        for _ in range(7):
            gate.release(throttled=False, latency=0.0)
        await asyncio.sleep(0.01)
        assert waiter.done() and gate.inflight == 8
        limit = gate.limit
        for _ in range(8):  # a round of answers adds about one slot
            gate.release(throttled=False)
        assert limit + 0.8 < gate.limit < limit + 1.1

    asyncio.run(main())


def test_retry_after_pauses_every_new_request() -> None:
    async def main() -> float:
        clock = Clock(scale=100)
        gate = Adaptive(4, clock)
        await gate.acquire()
        gate.release(throttled=True, retry_after=30.0)  # simulated seconds
        await gate.acquire()
        return clock.now()

    assert asyncio.run(main()) >= 30.0


def test_a_cancelled_waiter_gives_its_slot_on() -> None:
    async def main() -> None:
        gate = Adaptive(1, Clock())
        await gate.acquire()
        first = asyncio.ensure_future(gate.acquire())
        second = asyncio.ensure_future(gate.acquire())
        await asyncio.sleep(0)
        gate.release(throttled=False)  # hands the slot to `first` ...
        first.cancel()  # ... which is cancelled before it runs: `second` gets it
        await asyncio.sleep(0.01)
        assert second.done() and gate.inflight == 1

    asyncio.run(main())


def test_an_engine_within_the_servers_budget_meets_no_429_and_one_without_a_budget_adapts(tmp_path) -> None:
    """The mock server's per-minute limits and the engine's budget, on a clock 10x real time."""
    from juge.data.records import Case
    from juge.engine import Engine, EngineOptions, build_tasks
    from juge.judges import judge_from_dict
    from juge.providers.openai_compat import OpenAICompatProvider
    from juge.store import Store
    from juge.testing.mockserver import MockConfig, serve_in_thread

    judge = judge_from_dict(
        {"name": "pf", "setup": "passfail", "model": "mock-judge-2026-01", "description": "ok?", "max_tokens": 16}
    )
    cases = [Case(id=f"c{i}", question=f"q{i}", output=f"o{i}") for i in range(30)]
    results = {}
    for budget in (True, False):
        config = MockConfig(rpm=20, time_scale=10)  # 20 requests per simulated minute (six real seconds)
        with serve_in_thread(config) as server, Store(tmp_path / f"{budget}.db") as store:
            provider = OpenAICompatProvider(base_url=server.url)
            options = EngineOptions(
                concurrency=16, retries=10, backoff=0.5, progress=False, time_scale=10, rpm=20 if budget else None
            )
            engine = Engine(store, options)
            run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)

            async def main(engine=engine, provider=provider, run_id=run_id) -> int:
                try:
                    return await engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider})
                finally:
                    await provider.aclose()

            stored = asyncio.run(main())
            results[budget] = (stored, server.stats(), next(iter(engine._adaptive.values())))
    stored, stats, _ = results[True]
    # none in principle; a few when a loaded machine delays an arrival by more than the margin
    # (a real second is 10 simulated ones here)
    assert stored == 30 and stats["rate_limited"] <= 1
    assert stats["clock"] >= 30  # 30 requests at 20 a minute take more than a simulated half minute
    stored, stats, gate = results[False]
    # 30 requests at once exceed 20 a minute, so a 429 is certain; how many more follow is not: the
    # first 429's Retry-After pauses every request, so only those already in flight meet one (on a
    # slow machine, one or two)
    assert stored == 30 and stats["rate_limited"] >= 1
    assert gate.decreases >= 1 and gate.paused_until > 0  # concurrency halved, and the server's wait kept


def test_a_models_budget_holds_back_only_that_models_requests(tmp_path) -> None:
    from juge.engine import Engine, EngineOptions
    from juge.providers import make_provider
    from juge.store import Store

    provider = make_provider("scripted", default="PASS\nok")
    options = EngineOptions(progress=False, time_scale=60, limits={"slow-model": (2, None)})
    with Store(tmp_path / "j.db") as store:
        engine = Engine(store, options)

        async def main() -> dict[str, float]:
            done: dict[str, float] = {}
            for model in ("slow-model", "free-model"):
                for i in range(3):
                    req = Request(messages=({"role": "user", "content": f"{model} {i}"},), model=model)
                    await engine.call(provider, req, run_id=None)
                done[model] = engine.clock.now()
            return done

        done = asyncio.run(main())
    assert done["slow-model"] >= WINDOW  # its third request waited for the first to leave the minute
    assert done["free-model"] - done["slow-model"] < WINDOW / 2  # the other model's went at once


def test_the_eval_files_budgets_reach_the_engine(tmp_path) -> None:
    from juge.config import load_eval
    from juge.errors import InputError

    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n')
    good = tmp_path / "eval.toml"
    good.write_text(
        'cases = "cases.jsonl"\n[engine]\nrpm = 500\ntpm = 20000\n[engine.limits."gpt-4o-mini"]\ntpm = 1000\n'
    )
    engine = load_eval(good).spec.engine
    assert (engine.rpm, engine.tpm, engine.limits["gpt-4o-mini"].tpm, engine.limits["gpt-4o-mini"].rpm) == (
        500,
        20000,
        1000,
        None,
    )
    bad = tmp_path / "bad.toml"
    bad.write_text('cases = "cases.jsonl"\n[engine]\nrpm = 0\n')
    with pytest.raises(InputError, match="rpm"):
        load_eval(bad)
