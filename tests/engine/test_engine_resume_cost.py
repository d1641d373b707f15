"""What a resumed run is charged for answers a killed process bought."""

from __future__ import annotations

import asyncio

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import make_provider


def test_a_resumed_run_charges_an_answer_shared_by_two_tasks_once(store):
    """Two cases whose judge prompts are the same share one answer. The killed process bought it and
    stored the first case's judgment (which carries its cost); the resumed run gets it from the cache
    for the second case: that is a free cache hit, not a second payment."""
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Polite?", "model": "m1"})
    cases = [Case(id="a", question="q", output="same"), Case(id="b", question="q", output="same")]
    provider = make_provider("scripted", default="PASS\nFine.")
    prices = {"scripted": (1e6, 1e6)}  # US$1 a token
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
    tasks = build_tasks(cases, [judge])
    asyncio.run(
        Engine(store, EngineOptions(progress=False, prices=prices)).run_tasks(run_id, tasks[:1], {"pf": provider})
    )
    asyncio.run(Engine(store, EngineOptions(progress=False, prices=prices)).run_tasks(run_id, tasks, {"pf": provider}))
    got = {j.item_id: (j.cost, j.attempts) for j in store.judgments(run_id)}
    paid = got["a"][0]
    assert store.count_calls(run_id) == 1 and paid > 0
    assert got == {"a": (paid, 1), "b": (0.0, 0)}


def test_a_resumed_solve_first_pair_run_costs_what_the_run_without_a_kill_costs(tmp_path):
    """A solve-first pair judge asks for one solution and uses it in both orders. The killed process
    stored the first order's judgment (paying for the solution); the resumed run's second order gets
    the solution free, as it does in a run that was never killed."""
    from juge.store import Store

    judge = judge_from_dict(
        {"name": "pair", "setup": "pairwise", "description": "Which is better?", "model": "m1", "solve_first": True}
    )
    cases = [Case(id="p", question="6*7?", output_1="42", output_2="about forty")]
    provider = make_provider("scripted", fn=lambda r: "42" if r.meta["template"].endswith("/solve") else "[[A]]")
    options = dict(progress=False, prices={"scripted": (1e6, 1e6)}, concurrency=1)
    tasks = build_tasks(cases, [judge])

    def costs(db: str, batches) -> dict:
        with Store(tmp_path / db) as store:
            run_id = store.create_run(dataset_hash="d", juge_version="t", cases=cases)
            for batch in batches:  # each batch a new process
                asyncio.run(Engine(store, EngineOptions(**options)).run_tasks(run_id, batch, {"pair": provider}))
            return {j.order: (j.cost, j.tokens_in) for j in store.judgments(run_id)}

    clean = costs("clean.db", [tasks])
    assert set(clean) == {"12", "21"} and clean["12"][0] > clean["21"][0] > 0
    assert costs("resumed.db", [tasks[:1], tasks]) == clean


def test_an_answer_a_killed_process_bought_is_charged_to_what_it_was_bought_for(store):
    """Two cases' system outputs share one prompt. The killed process bought the answer for case a and
    stored nothing: the resumed run charges it to case a, whichever of the two asks first."""
    from juge.engine import payer_of
    from juge.providers import Request

    provider = make_provider("scripted", default="Open 9 to 5.")
    request = Request(messages=({"role": "user", "content": "hours?"},), model="sut")
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[Case(id="a", question="hours?")])
    killed = Engine(store, EngineOptions(progress=False))
    asyncio.run(killed.call(provider, request, run_id=run_id, payer=payer_of("a", "output")))
    resumed = Engine(store, EngineOptions(progress=False))
    b = asyncio.run(resumed.call(provider, request, run_id=run_id, payer=payer_of("b", "output")))
    a = asyncio.run(resumed.call(provider, request, run_id=run_id, payer=payer_of("a", "output")))
    assert (a.attempts, b.attempts) == (1, 0) and store.count_calls(run_id) == 1
