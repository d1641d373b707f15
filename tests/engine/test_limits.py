"""Rate budgets and adaptive concurrency (juge.limits).

The unit tests run on a virtual clock (`run_virtual`): a wait takes exactly what the code asked
for and no real time, so they assert exact times however loaded the machine is. The end-to-end
test talks HTTP to a mock server on a clock that runs fast.
"""

import asyncio

import pytest

from juge.limits import MARGIN, MARGIN_REAL, WINDOW, Adaptive, Budget, Clock
from juge.providers.base import Request
from virtual_time import run_virtual


def request(chars: int = 400, max_tokens: int | None = 100) -> Request:
    return Request(messages=({"role": "user", "content": "x" * chars},), model="m", max_tokens=max_tokens)


def max_in_any_window(times: list[float], weights: list[float] | None = None) -> float:
    weights = weights or [1.0] * len(times)
    return max(sum(w for t, w in zip(times, weights) if start <= t < start + WINDOW) for start in times)


def virtual_clock(scale: float = 1.0) -> Clock:
    """A clock on the running loop's virtual time (see `run_virtual`)."""
    return Clock(scale=scale, now=asyncio.get_running_loop().time)


def test_requests_per_minute_are_never_exceeded_and_the_limit_is_used() -> None:
    async def main() -> list[float]:
        budget = Budget(rpm=10, tpm=None, clock=virtual_clock(scale=240), margin=0.0)
        times = []
        for _ in range(35):
            times.append((await budget.admit(request())).at)
        return times

    times = run_virtual(main())
    assert max_in_any_window(times) == 10
    # 35 requests at 10 a minute: ten at once, then ten each time the first ten of the window leave it
    assert times == pytest.approx([0.0] * 10 + [WINDOW] * 10 + [2 * WINDOW] * 10 + [3 * WINDOW] * 5, abs=1e-3)


def test_a_spend_leaves_the_window_a_margin_late_longer_on_a_fast_clock() -> None:
    async def second_admitted(scale: float) -> float:
        budget = Budget(rpm=1, tpm=None, clock=virtual_clock(scale))  # the default margin
        await budget.admit(request())
        return (await budget.admit(request())).at

    assert run_virtual(second_admitted(1.0)) == pytest.approx(WINDOW + MARGIN)  # 1 % of the window
    # a quarter of a real second: on a clock 240 times real time, a simulated minute
    assert run_virtual(second_admitted(240.0)) == pytest.approx(WINDOW + MARGIN_REAL * 240)


def test_tokens_are_estimated_before_and_corrected_from_usage() -> None:
    async def main() -> tuple[Budget, list[float]]:
        budget = Budget(rpm=None, tpm=1000, clock=virtual_clock(scale=120), margin=0.0)
        first = [await budget.admit(request()) for _ in range(5)]  # 400 chars / 4 + 100 = 200 each
        assert budget.tokens == pytest.approx(1000)
        for spend in first:  # the server counted 50 prompt tokens and 10 of answer
            budget.settle(spend, request(), 50, 10)
        assert budget.tokens == pytest.approx(300)
        sixth = await budget.admit(request())  # fits at once now
        return budget, [s.at for s in first] + [sixth.at]

    budget, times = run_virtual(main())
    assert times[-1] == 0.0  # it did not wait for the first ones to leave the window
    # the prompt estimate learnt that this server counts fewer tokens than chars / 4
    assert 0.5 < budget.prompt_factor < 1.0
    assert budget.estimate(request()) < 200


def test_a_request_larger_than_the_token_budget_waits_for_an_empty_window_then_goes_alone() -> None:
    async def main() -> list[float]:
        budget = Budget(rpm=None, tpm=100, clock=virtual_clock(scale=1200), margin=0.0)
        a = await budget.admit(request(chars=40, max_tokens=50))
        b = await budget.admit(request(chars=4000, max_tokens=50))
        return [a.at, b.at]

    a, b = run_virtual(main())
    assert b - a == pytest.approx(WINDOW)


def test_aimd_halves_on_a_429_at_most_once_a_round_and_grows_back_by_about_one_a_round() -> None:
    async def main() -> None:
        gate = Adaptive(16, virtual_clock())
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

    run_virtual(main())


def test_retry_after_pauses_every_new_request() -> None:
    async def main() -> float:
        clock = virtual_clock(scale=100)
        gate = Adaptive(4, clock)
        await gate.acquire()
        gate.release(throttled=True, retry_after=30.0)  # simulated seconds
        await gate.acquire()
        return clock.now()

    assert run_virtual(main()) == pytest.approx(30.0)


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
    """The mock server's per-minute limit and the engine's budget, on a clock 20x real time.

    The engine's budget is half the server's: the client counts a request when it sends it, the
    server when it arrives, and on a loaded machine (client and server share it) the two can be
    seconds apart; at half the limit a 429 would need a request held up for a simulated minute
    (three real seconds). That the budget is used to the full, and the margin it keeps, are the
    unit tests' (on a virtual clock)."""
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
        config = MockConfig(rpm=20, time_scale=20)  # 20 requests per simulated minute (three real seconds)
        with serve_in_thread(config) as server, Store(tmp_path / f"{budget}.db") as store:
            provider = OpenAICompatProvider(base_url=server.url)
            options = EngineOptions(
                concurrency=16, retries=10, backoff=0.5, progress=False, time_scale=20, rpm=10 if budget else None
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
    assert stored == 30 and stats["rate_limited"] == 0
    # 30 requests at 10 a minute: the last ten wait for two minutes to pass (a budget at the server's
    # 20 a minute, or none, would send them within one)
    assert stats["clock"] >= 2 * WINDOW
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
            engine.clock = Clock(scale=60, now=asyncio.get_running_loop().time)  # virtual: see run_virtual
            done: dict[str, float] = {}
            for model in ("slow-model", "free-model"):
                for i in range(3):
                    req = Request(messages=({"role": "user", "content": f"{model} {i}"},), model=model)
                    await engine.call(provider, req, run_id=None)
                done[model] = engine.clock.now()
            return done

        done = run_virtual(main())
    assert done["slow-model"] >= WINDOW  # its third request waited for the first to leave the minute
    assert done["free-model"] == done["slow-model"]  # the other model's went at once


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
