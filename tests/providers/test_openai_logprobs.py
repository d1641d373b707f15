"""`logprobs = true` on the openai provider: a constrained judge's first-token log-probabilities over its allowed
answers are recorded as the call's distribution (what --rule guarantee and --cascade read), hand-worked; off by
default, and nothing is asked of an unconstrained judge."""

from __future__ import annotations

import asyncio
import json
import math

import httpx
import pytest

from juge.policy.confidence import item_confidence
from juge.providers import ProviderError, Request
from juge.providers.openai_compat import OpenAICompatProvider

ALLOWED = ("PASS", "FAIL")


def entry(token: str, logprob: float, tops: list[tuple[str, float]] | None = None) -> dict:
    out: dict = {"token": token, "logprob": logprob, "bytes": list(token.encode())}
    if tops is not None:
        out["top_logprobs"] = [{"token": t, "logprob": lp, "bytes": list(t.encode())} for t, lp in tops]
    return out


def body(text: str, content: list | None) -> dict:
    choice = {"message": {"role": "assistant", "content": text}, "finish_reason": "stop"}
    if content is not None:
        choice["logprobs"] = {"content": content}
    return {"model": "m1-2026", "choices": [choice], "usage": {"prompt_tokens": 5, "completion_tokens": 1}}


def ask(answer: dict, *, logprobs: bool = True, allowed: tuple[str, ...] | None = ALLOWED):
    sent: list[dict] = []

    def handler(request: httpx.Request) -> httpx.Response:
        sent.append(json.loads(request.content))
        return httpx.Response(200, json=answer)

    client = httpx.AsyncClient(transport=httpx.MockTransport(handler))
    provider = OpenAICompatProvider(base_url="http://test/v1", api_key="k", http_client=client, logprobs=logprobs)
    request = Request(messages=({"role": "user", "content": "q"},), model="m1", max_tokens=4, allowed=allowed)
    return asyncio.run(provider.complete(request)), sent[0], provider


def test_the_first_tokens_probabilities_over_the_allowed_answers():
    # PASS at log 0.7, " FAIL" (a leading blank) at log 0.2 and "FAIL" at log 0.05, "Pass" not an answer:
    # PASS 0.7 / 0.95, FAIL 0.25 / 0.95.
    tops = [("PASS", math.log(0.7)), (" FAIL", math.log(0.2)), ("FAIL", math.log(0.05)), ("Pass", math.log(0.04))]
    r, sent, _ = ask(body("PASS", [entry("PASS", math.log(0.7), tops)]))
    assert sent["logprobs"] is True and sent["top_logprobs"] == 20
    assert r.text == "PASS" and r.distribution == pytest.approx({"PASS": 0.7 / 0.95, "FAIL": 0.25 / 0.95})
    # The confidence of a PASS/FAIL judge on that call is the share of PASS.
    from juge.data.records import Judgment

    call = Judgment(item_id="x", judge="j", model="m", template="t", verdict="PASS", outcome="ok",
                    distribution=r.distribution)  # fmt: skip
    assert item_confidence("passfail", "PASS", [call]) == pytest.approx(0.7 / 0.95)


def test_no_distribution_when_off_unconstrained_absent_or_another_first_token():
    tops = [("PASS", -0.1), ("FAIL", -2.0)]
    r, sent, _ = ask(body("PASS", [entry("PASS", -0.1, tops)]), logprobs=False)
    assert "logprobs" not in sent and r.distribution is None
    r, sent, _ = ask(body("PASS", [entry("PASS", -0.1, tops)]), allowed=None)
    assert "logprobs" not in sent and r.distribution is None
    assert ask(body("PASS", None))[0].distribution is None  # a server that ignores the parameter
    # The answer begins with a blank token, then "Verdict": nothing said about PASS or FAIL.
    r, _, _ = ask(body("Verdict: PASS", [entry("\n", -0.01, []), entry("Verdict", -0.3, tops)]))
    assert r.distribution is None
    # The chosen token missing from its own top list still counts.
    r, _, _ = ask(body("FAIL", [entry("FAIL", math.log(0.6), [("PASS", math.log(0.3))])]))
    assert r.distribution == pytest.approx({"PASS": 1 / 3, "FAIL": 2 / 3})


@pytest.mark.parametrize(
    "content",
    [
        "not a list",
        [entry("PASS", 0.5, [("PASS", 0.5)])],  # a log-probability above 0
        [{"token": "PASS", "logprob": "-0.1", "top_logprobs": []}],  # a number in a string
        [{"token": 3, "logprob": -0.1, "top_logprobs": []}],
        [entry("PASS", -0.1)],  # no top_logprobs
    ],
)
def test_a_logprobs_block_of_the_wrong_shape_is_a_clear_error(content):
    answer = body("PASS", None)
    answer["choices"][0]["logprobs"] = {"content": content}
    with pytest.raises(ProviderError, match="logprob|top_logprobs|content") as exc:
        ask(answer)
    assert not exc.value.retryable


def test_the_option_must_be_a_boolean():
    with pytest.raises(ProviderError, match="logprobs must be true or false"):
        OpenAICompatProvider(base_url="http://test/v1", api_key="k", logprobs="yes")  # type: ignore[arg-type]


def test_log_probabilities_too_small_for_exp_still_give_a_distribution():
    """exp(-800) is 0.0 in floating point: the shares are read relative to the largest (PASS e^100 times FAIL)."""
    r, _, _ = ask(body("PASS", [entry("PASS", -800.0, [("PASS", -800.0), ("FAIL", -900.0)])]))
    assert r.distribution == pytest.approx({"PASS": 1.0, "FAIL": math.exp(-100)})


def test_a_refusal_with_its_log_probabilities_is_a_refusal_not_a_malformed_answer():
    """OpenAI gives a refusal's log-probabilities as {"content": null, "refusal": [...]}: a valid shape."""
    answer = body("", None)
    answer["choices"][0]["message"] = {"role": "assistant", "content": None, "refusal": "I can't help with that."}
    answer["choices"][0]["logprobs"] = {"content": None, "refusal": [entry("I", -0.1, [("I", -0.1)])]}
    r, _, _ = ask(answer)
    assert r.refused and r.distribution is None


def test_a_first_token_that_is_only_the_start_of_the_answer_gives_no_distribution():
    """A tokenizer that splits digits writes 10 as "1", "0": the first token's probabilities are those of "1",
    not of the answer 10, on a 1-10 scale where both are allowed answers."""
    scale = tuple(str(n) for n in range(1, 11))
    tops = [("1", -0.05), ("9", -3.0)]
    r, _, _ = ask(body("10", [entry("1", -0.05, tops), entry("0", -0.01, [("0", -0.01)])]), allowed=scale)
    assert r.text == "10" and r.distribution is None
    r, _, _ = ask(body("9", [entry("9", -0.05, [("9", -0.05), ("8", -3.0)])]), allowed=scale)
    assert r.distribution is not None and max(r.distribution, key=r.distribution.get) == "9"
