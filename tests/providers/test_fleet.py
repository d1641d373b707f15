"""A judge served by a fleet of endpoints: load balanced by outstanding requests, a failing endpoint
taken out, the request sent to another at once, and the endpoint tried again after its cooldown."""

import asyncio
from contextlib import ExitStack
from pathlib import Path

import pytest

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import ProviderError, Request, Response, make_provider
from juge.providers.base import Provider
from juge.providers.fleet import FleetProvider
from juge.store import Store
from juge.testing.mockserver import MockConfig, serve_in_thread
from virtual_time import run_virtual

REQUEST = Request(messages=({"role": "user", "content": "hi"},), model="m")


class Member(Provider):
    """An endpoint that answers after `delay` seconds, or fails the way it is told to."""

    def __init__(self, name: str, delay: float = 0.0):
        self.name = name
        self.delay = delay
        self.fail: ProviderError | None = None
        self.calls = 0

    async def complete(self, request: Request) -> Response:
        self.calls += 1
        await asyncio.sleep(self.delay)
        if self.fail is not None:
            raise self.fail
        return Response(text=self.name, model="m")


def fleet_of(*members: Member, now: list[float] | None = None) -> FleetProvider:
    clock = now if now is not None else [0.0]
    return FleetProvider(list(members), [m.name for m in members], cooldown=5, max_cooldown=20, clock=lambda: clock[0])


def test_requests_go_to_the_endpoint_with_the_fewest_outstanding() -> None:
    # on a virtual clock: the members answer after exactly their delays, however loaded the machine
    fast, slow = Member("fast", 0.005), Member("slow", 0.05)
    fleet = fleet_of(fast, slow)

    async def main() -> None:
        sem = asyncio.Semaphore(4)

        async def one() -> None:
            async with sem:
                await fleet.complete(REQUEST)

        await asyncio.gather(*(one() for _ in range(200)))

    run_virtual(main())
    assert fast.calls + slow.calls == 200
    assert fast.calls > 3 * slow.calls > 0  # the slow one holds its requests longer, so it gets fewer


def test_a_failing_endpoint_is_taken_out_then_tried_again_after_its_cooldown() -> None:
    now = [0.0]
    a, b = Member("a"), Member("b")
    fleet = fleet_of(a, b, now=now)
    a.fail = ProviderError("connection failed: refused", retryable=True)

    async def answers(n: int) -> list[str]:
        return [(await fleet.complete(REQUEST)).text for _ in range(n)]

    assert asyncio.run(answers(3)) == ["b", "b", "b"]  # the first went to a, failed, and went on to b
    assert a.calls == 1 and fleet.endpoints[0].taken_out == 1
    now[0] = 5.1  # after the cooldown a is tried again; it still fails: out for twice as long
    assert asyncio.run(answers(1)) == ["b"]
    assert a.calls == 2 and fleet.endpoints[0].down_until == pytest.approx(15.1)
    a.fail = None
    now[0] = 15.2
    assert asyncio.run(answers(2)) == ["a", "b"]  # back, and its failures forgotten
    assert fleet.endpoints[0].failures == 0


def test_errors_of_the_answer_are_not_the_endpoints() -> None:
    a, b = Member("a"), Member("b")
    a.fail = ProviderError("HTTP 400: bad request", status=400)
    fleet = fleet_of(a, b)
    with pytest.raises(ProviderError, match="400"):
        asyncio.run(fleet.complete(REQUEST))
    assert fleet.endpoints[0].taken_out == 0 and b.calls == 0


def test_every_endpoint_out_is_a_retryable_error_naming_them() -> None:
    a, b = Member("a"), Member("b")
    a.fail = b.fail = ProviderError("HTTP 503: overloaded", status=503, retryable=True)
    with pytest.raises(ProviderError, match="every endpoint") as err:
        asyncio.run(fleet_of(a, b).complete(REQUEST))
    assert err.value.retryable


def test_a_list_of_base_urls_makes_a_fleet_and_a_bad_one_is_refused() -> None:
    fleet = make_provider("openai", base_url=["http://127.0.0.1:1/v1", "http://127.0.0.1:2/v1"])
    assert isinstance(fleet, FleetProvider) and len(fleet.endpoints) == 2
    assert not isinstance(make_provider("openai", base_url="http://127.0.0.1:1/v1"), FleetProvider)
    with pytest.raises(ValueError, match="twice"):
        make_provider("openai", base_url=["http://127.0.0.1:1/v1", "http://127.0.0.1:1/v1"])


class Held(Provider):
    """An endpoint's provider whose new requests wait while `open_` is clear (the test kills a server)."""

    def __init__(self, inner: Provider, open_: asyncio.Event, answered: list[int], on_answer):
        self.inner, self.open, self.answered, self.on_answer = inner, open_, answered, on_answer
        self.name = inner.name

    async def complete(self, request: Request) -> Response:
        await self.open.wait()
        response = await self.inner.complete(request)
        self.answered[0] += 1
        self.on_answer()
        return response

    async def aclose(self) -> None:
        await self.inner.aclose()


@pytest.mark.usefixtures("each_http_client")
def test_a_run_over_three_servers_survives_one_killed_mid_run(tmp_path: Path) -> None:
    """After the 30th answer no request is sent until the middle server is dead: the requests then
    sent to it (at least one: it has the fewest outstanding) find it gone and go on to the others,
    however fast the run goes on a loaded machine."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "model": "mock-judge-2026-01", "description": "ok?"})
    cases = [Case(id=f"c{i}", question=f"q{i}", output=f"o{i}") for i in range(90)]
    with ExitStack() as others, ExitStack() as doomed, Store(tmp_path / "j.db") as store:
        first = others.enter_context(serve_in_thread(MockConfig(latency=0.01)))
        killed = doomed.enter_context(serve_in_thread(MockConfig(latency=0.01)))
        third = others.enter_context(serve_in_thread(MockConfig(latency=0.01)))
        fleet = make_provider("openai", base_url=[first.url, killed.url, third.url], cooldown=60)
        assert isinstance(fleet, FleetProvider)
        engine = Engine(store, EngineOptions(concurrency=6, retries=0, progress=False))
        run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
        at_kill: list[int] = []  # each endpoint's answers once the server is dead, then the dead one's outstanding

        async def main() -> int:
            open_, reached, answered = asyncio.Event(), asyncio.Event(), [0]
            open_.set()

            def on_answer() -> None:
                if answered[0] == 30:
                    open_.clear()  # at once, before any other request is sent
                    reached.set()

            for e in fleet.endpoints:
                e.provider = Held(e.provider, open_, answered, on_answer)

            async def kill() -> None:
                await reached.wait()
                await asyncio.to_thread(doomed.close)
                at_kill.extend([*(e.answered for e in fleet.endpoints), fleet.endpoints[1].outstanding])
                open_.set()

            killer = asyncio.ensure_future(kill())
            try:
                return await engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": fleet})
            finally:
                await killer
                await fleet.aclose()

        stored = asyncio.run(main())
        outcomes = {j.outcome for j in store.judgments(run_id)}
    assert stored == 90 and outcomes == {"ok"}  # no engine retry was needed: the fleet sent them on
    served = [e.answered for e in fleet.endpoints]
    assert sum(served) == 90
    *before, in_flight = at_kill
    # it served until it was killed, and nothing after (but what was on its way back as it died) ...
    assert 0 < before[1] <= served[1] <= before[1] + in_flight
    assert fleet.endpoints[1].taken_out >= 1
    assert served[0] > before[0] and served[2] > before[2]  # ... and the other two took the rest
