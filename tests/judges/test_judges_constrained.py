"""Constrained judges: the answer is one of a fixed set of strings (scored by log-probability)."""

import asyncio

import pytest

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import Request, Response, make_provider

LEVELS = {"1": "bad", "2": "fair", "3": "good"}


def make(setup, constrained, **extra):
    base = {"name": "j", "setup": setup, "description": "Is it right?", "model": "m", "constrained": constrained}
    if setup == "score":
        base["levels"] = LEVELS
    return judge_from_dict(base | extra)


@pytest.mark.parametrize("setup", ["passfail", "pairwise", "score"])
def test_constrained_changes_prompt_and_version(setup):
    plain, constrained = make(setup, False), make(setup, True)
    assert plain.template_hash != constrained.template_hash
    case = Case(id="c", question="q", output="o", output_1="a", output_2="b")
    order = "12" if setup == "pairwise" else None
    text = constrained.render(case, order=order)[-1]["content"]
    assert "and nothing else" in text
    assert "and nothing else" not in plain.render(case, order=order)[-1]["content"]


@pytest.mark.parametrize(
    "setup, text, outcome, verdict",
    [
        ("passfail", "PASS", "ok", "PASS"),
        ("passfail", "PASS\nbecause", "unparsed", None),
        ("passfail", "pass", "unparsed", None),
        ("pairwise", "C", "ok", "C"),
        ("pairwise", "[[C]]", "unparsed", None),
        ("pairwise", " A", "unparsed", None),
        ("score", "3", "ok", 3),
        ("score", "4", "unparsed", None),
        ("score", "3.0", "unparsed", None),
    ],
)
def test_constrained_parse_is_exact(setup, text, outcome, verdict):
    result = make(setup, True).parse(text)
    assert (result.outcome, result.verdict) == (outcome, verdict)


def test_criteria_cannot_be_constrained():
    with pytest.raises(Exception, match="constrained"):
        judge_from_dict(
            {
                "name": "j",
                "setup": "criteria",
                "description": "d",
                "constrained": True,
                "criteria": {"a": {"description": "x", "levels": LEVELS}},
            }
        )


def test_engine_sends_allowed_and_stores_distribution(store):
    seen = []

    def answer(request: Request) -> Response:
        seen.append(request.allowed)
        return Response(text="B", model="local-1", distribution={"A": 0.2, "B": 0.7, "C": 0.1})

    judge = make("pairwise", True)
    case = Case(id="p", question="q", output_1="a", output_2="b")
    engine = Engine(store, EngineOptions(progress=False))
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [judge]), {"j": make_provider("scripted", fn=answer)}))
    assert seen == [("A", "B", "C"), ("A", "B", "C")]
    js = store.judgments(run_id)
    assert {j.verdict for j in js} == {"B"}
    assert js[0].distribution == {"A": 0.2, "B": 0.7, "C": 0.1}


def test_rescaled_score_prompt_explains_the_mapping():
    judge = make("score", False, rescale_from=[0, 10])
    text = "\n".join(m["content"] for m in judge.render(Case(id="c", question="q", output="o")))
    assert "0.0 means level 1, 10.0 means level 3" in text
    plain = "\n".join(m["content"] for m in make("score", False).render(Case(id="c", question="q", output="o")))
    assert "means level" not in plain
