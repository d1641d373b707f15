"""juge survives a faulty model server: retries within bound, Retry-After honoured, every judgment accounted for.

The mock server (juge.testing.mockserver) decides each attempt's fault from (seed, request,
attempt number) and lists what each sight of each request met, so for every judgment the test knows
what the server did on each attempt and can check the call log, the stored judgment and the summary
against it exactly. On a loaded machine the engine may give up on an attempt before the server sees
it (or see it only after the retry): the server's attempt numbers then differ from the client's, so
each logged attempt is matched to the server's sights rather than to its own number.
"""

from __future__ import annotations

import asyncio
import gc
import itertools
import json
import re
import sqlite3
import warnings
from collections import Counter, defaultdict
from pathlib import Path

import pytest

from cli_helpers import run_cli, write_jsonl
from juge.engine import Engine, EngineOptions
from juge.providers.base import Provider, ProviderError, Request, Response
from juge.providers.openai_compat import OpenAICompatProvider
from juge.store import Store
from juge.testing.mockserver import (
    FAULT_KINDS,
    MockConfig,
    expected_answer,
    injected_fault,
    request_digest,
    serve_in_subprocess,
    serve_in_thread,
)

REQUEST = Request(messages=({"role": "user", "content": "Is this answer right?"},), model="mock-judge")


@pytest.fixture
def sleeps(monkeypatch) -> list[float]:
    """The delays the engine waits between attempts (recorded, not slept)."""
    recorded: list[float] = []
    real_sleep = asyncio.sleep

    async def record(delay: float, *args, **kwargs):
        recorded.append(delay)
        await real_sleep(0)

    monkeypatch.setattr("juge.engine.calls.asyncio.sleep", record)
    return recorded


class RateLimitedOnce(Provider):
    """Answers after one 429 that asks the client to wait `retry_after` seconds."""

    name = "rate-limited-once"

    def __init__(self, retry_after: float | None):
        self.retry_after = retry_after
        self.calls = 0

    async def complete(self, request: Request) -> Response:
        self.calls += 1
        if self.calls == 1:
            raise ProviderError("HTTP 429: slow down", retryable=True, status=429, retry_after=self.retry_after)
        return Response(text="PASS\nfine", model=request.model)


@pytest.mark.parametrize(
    ("retry_after", "backoff", "max_backoff", "low", "high"),
    [
        (0.3, 0.001, 60.0, 0.3, 0.3),  # the server's wait is longer than the backoff: it wins
        (30.0, 0.001, 0.2, 0.2, 0.2),  # ... but never beyond max_backoff
        (0.01, 1.0, 60.0, 0.5, 1.5),  # the backoff (1 s, jittered x0.5-1.5) is longer: it wins
        (None, 1.0, 60.0, 0.5, 1.5),  # no Retry-After: the backoff alone
    ],
)
def test_engine_waits_for_retry_after_capped_by_max_backoff(
    store, sleeps, retry_after, backoff, max_backoff, low, high
):
    engine = Engine(store, EngineOptions(retries=2, backoff=backoff, max_backoff=max_backoff, progress=False, seed=1))
    answer = asyncio.run(engine.call(RateLimitedOnce(retry_after), REQUEST, run_id=None))
    assert answer.attempts == 2 and answer.response.text == "PASS\nfine"
    assert len(sleeps) == 1 and low <= sleeps[0] <= high


@pytest.mark.usefixtures("each_http_client")
def test_engine_honours_the_mock_servers_retry_after_end_to_end(store, sleeps):
    engine = Engine(store, EngineOptions(retries=2, backoff=0.001, max_backoff=10, progress=False))
    with serve_in_thread(MockConfig(faults={"rate_limit": 1.0}, retry_after=0.25)) as server:

        async def main():
            provider = OpenAICompatProvider(base_url=server.url)
            try:
                return await engine.call(provider, REQUEST, run_id=None)
            finally:
                await provider.aclose()

        with pytest.raises(ProviderError, match="HTTP 429") as exc:
            asyncio.run(main())
        stats = server.stats()
    assert exc.value.attempts == 3 and stats["faults"]["rate_limit"] == 3
    assert sleeps == [pytest.approx(0.25), pytest.approx(0.25)]


@pytest.mark.needs("anthropic")
def test_anthropic_reads_retry_after_too():
    from juge.providers.anthropic import AnthropicProvider

    try:  # recent anthropic SDKs run on httpx2; older ones on httpx
        import httpx2 as http
    except ImportError:
        import httpx as http
    body = {"type": "error", "error": {"type": "rate_limit_error", "message": "slow down"}}
    transport = http.MockTransport(lambda request: http.Response(429, json=body, headers={"retry-after": "3"}))
    provider = AnthropicProvider(api_key="k", http_client=http.AsyncClient(transport=transport))

    async def main():
        try:
            await provider.complete(REQUEST)
        finally:
            await provider.aclose()

    with pytest.raises(ProviderError) as exc:
        asyncio.run(main())
    assert exc.value.status == 429 and exc.value.retryable and exc.value.retry_after == 3.0


# --- 2,000 judge calls against a server that faults 20 % of attempts, every kind ----------------

PASSFAIL_ANSWERS = ("PASS\nThe answer does what was asked.", "FAIL\nThe answer misses the point.")
PAIRWISE_ANSWERS = (
    "The first answer is more accurate.\n[[A]]",
    "The second answer is more accurate.\n[[B]]",
    "Both answers are equally good.\n[[C]]",
)
FAULTS = {kind: 0.20 / len(FAULT_KINDS) for kind in FAULT_KINDS}
ENGINE_TIMEOUT = 2.0  # a `timeout` fault holds the request for HANG s: the engine gives up after this
HANG = 30.0
JUDGE_MODEL = "mock-judge-2026-01"
ANSWERED = (None, "empty", "refusal")  # attempts that return a completion: the engine stops there


def write_eval(tmp_path: Path, singles: int, pairs: int, retries: int, passfail_url: str, pairwise_url: str) -> Path:
    """An eval of `singles` single-answer cases (a pass/fail judge) and `pairs` pairs (a pairwise judge,
    both orders), each judge on its own mock server."""
    rows = [{"id": f"s{k}", "question": f"What is {k} + {k}?", "output": f"It is {2 * k}."} for k in range(singles)]
    rows += [
        {
            "id": f"p{k}",
            "question": f"Name a prime above {k}.",
            "output_1": f"{k} + 1, maybe.",
            "output_2": f"The next prime after {k}.",
        }
        for k in range(pairs)
    ]
    write_jsonl(tmp_path / "cases.jsonl", rows)
    path = tmp_path / "eval.toml"
    path.write_text(
        f'''
name = "faults"
cases = "cases.jsonl"

[provider]
name = "openai"
options = {{ base_url = "{passfail_url}" }}

[[judges]]
name = "correct"
setup = "passfail"
description = "The answer is arithmetically correct."
model = "{JUDGE_MODEL}"

[[judges]]
name = "better"
setup = "pairwise"
description = "Which answer names a prime correctly?"
model = "{JUDGE_MODEL}"
provider = "openai"
provider_options = {{ base_url = "{pairwise_url}" }}

[engine]
concurrency = 64
retries = {retries}
timeout = {ENGINE_TIMEOUT}
backoff = 0.005
max_backoff = 0.1
''',
        encoding="utf-8",
    )
    return path


def attempt_kind(row: sqlite3.Row) -> str | None:
    """Which fault an attempt in the call log met, read from what the engine recorded (None: a plain answer)."""
    if row["response"] is not None:
        response = json.loads(row["response"])
        return "refusal" if response["refused"] else ("empty" if response["text"] == "" else None)
    by_status = {429: "rate_limit", 500: "server_error", 503: "unavailable"}
    if row["status"] in by_status:
        return by_status[row["status"]]
    error = row["error"]
    for needle, kind in (
        ("no answer within", "timeout"),
        ("reset by peer", "reset"),
        ("without sending complete message body", "truncated"),
        ("not valid JSON", "malformed"),
    ):
        if needle in error:
            return kind
    return f"unrecognised: {error}"


def sights_of_attempts(logged: list[str | None], sights: list[str | None]) -> tuple[int | None, ...]:
    """Which of the server's sights of a request (its arrival order) each logged attempt was, None for
    an attempt the server never saw; the alignment with the fewest late attempts, or AssertionError.

    An attempt that got an answer or an error met its sight's kind, and its sight came before those of
    the attempts after it (they were sent once it ended). An attempt the engine gave up on itself (logged
    as `timeout`) met a planned hang, or was late: it reached the server after the engine's time-out,
    even after its retry, or never (a loaded machine). Every sight is one attempt's."""
    fits = []
    for chosen in itertools.product([None, *range(len(sights))], repeat=len(logged)):
        seen = [c for c in chosen if c is not None]
        if sorted(seen) != list(range(len(sights))):
            continue
        if not all(kind == "timeout" or (c is not None and sights[c] == kind) for kind, c in zip(logged, chosen)):
            continue
        if all(
            chosen[j] is None or chosen[k] < chosen[j]  # an answered attempt's sight precedes later attempts'
            for k in range(len(logged))
            if logged[k] != "timeout"
            for j in range(k + 1, len(logged))
        ):
            fits.append(chosen)
    assert fits, (logged, sights)
    return min(fits, key=lambda c: sum(late_attempt(logged, sights, c)))


def late_attempt(logged: list[str | None], sights: list[str | None], chosen: tuple[int | None, ...]) -> list[bool]:
    """For each attempt: logged as the engine's own time-out on a sight that was not a planned hang."""
    return [kind == "timeout" and (c is None or sights[c] != "timeout") for kind, c in zip(logged, chosen)]


def expected_judgment(
    config: MockConfig, messages: list[dict], plan: list[str | None], setup: str
) -> tuple[str, str | None]:
    """(outcome, verdict) the last attempt implies: the server's answer's verdict, or how it failed."""
    last = plan[-1]
    if last is None:
        text = expected_answer(config, JUDGE_MODEL, messages)
        verdict = text.split("\n")[0] if setup == "passfail" else re.search(r"\[\[([ABC])\]\]", text).group(1)
        return "ok", verdict
    return {"empty": ("unparsed", None), "refusal": ("refused", None)}.get(last, ("error", None))


def fixed_order_pair_verdict(letter_12: str | None, letter_21: str | None) -> str:
    """Both orders' letters as one verdict for answer 1 (A) or 2 (B): in order 21 the letters swap."""
    if letter_12 is None or letter_21 is None:
        return "missing"
    first = {"A": "A", "B": "B", "C": "tie"}[letter_12]
    second = {"A": "B", "B": "A", "C": "tie"}[letter_21]
    return first if first == second else "inconsistent"


def run_faulty_eval(tmp_path: Path, monkeypatch, capsys, singles: int, pairs: int, retries: int) -> None:
    """Judge `singles` cases and `pairs` pairs (both orders) through `juge run` against two faulty servers,
    then check every judgment, every logged attempt and the summary against what the servers did."""
    passfail = MockConfig(faults=FAULTS, answers=PASSFAIL_ANSWERS, hang=HANG, seed=11)
    pairwise = MockConfig(faults=FAULTS, answers=PAIRWISE_ANSWERS, hang=HANG, seed=12)
    with serve_in_subprocess(passfail) as pf_server, serve_in_subprocess(pairwise) as pw_server:
        eval_path = write_eval(tmp_path, singles, pairs, retries, pf_server.url, pw_server.url)
        code, _, err = run_cli(
            monkeypatch,
            capsys,
            "run",
            str(eval_path),
            "--db",
            str(tmp_path / "juge.db"),
            "--no-progress",
            "--json",
            str(tmp_path / "summary.json"),
        )
        server_stats = {"correct": pf_server.stats(), "better": pw_server.stats()}
        server_sights = {"correct": pf_server.sights(), "better": pw_server.sights()}
    assert code == 0, err
    summary = json.loads((tmp_path / "summary.json").read_text())
    configs = {"correct": passfail, "better": pairwise}
    setups = {"correct": "passfail", "better": "pairwise"}

    with Store(tmp_path / "juge.db") as store:
        run_id = summary["run_id"]
        judgments = {(j.item_id, j.judge, j.order or ""): j for j in store.judgments(run_id)}
        rows = store.conn.execute("SELECT * FROM calls WHERE run_id = ? ORDER BY id", (run_id,)).fetchall()
    assert len(judgments) == singles + 2 * pairs  # every task ended in a stored judgment, once

    calls: dict[tuple[str, str, str], list[sqlite3.Row]] = defaultdict(list)
    for row in rows:
        meta = json.loads(row["request"])["meta"]
        calls[(meta["item_id"], meta["judge"], meta["order"] or "")].append(row)
    assert set(calls) == set(judgments)

    expected_outcomes: dict[str, Counter] = defaultdict(Counter)
    expected_verdicts: dict[str, Counter] = defaultdict(Counter)
    letters: dict[str, dict[str, str | None]] = defaultdict(dict)
    injected: Counter = Counter()  # (judge, kind) the server injected, sight by sight
    late: Counter = Counter()  # (judge, kind met by the server, or "unseen") of attempts the engine timed out on
    late_answers = 0
    sights_used = 0
    for key, judgment in judgments.items():
        judge = key[1]
        attempts = sorted(calls[key], key=lambda r: r["attempt"])
        messages = json.loads(attempts[0]["request"])["messages"]
        assert all(json.loads(r["request"])["messages"] == messages for r in attempts)
        # Retries stay within the bound, and the log holds each attempt once, in order.
        assert len(attempts) <= retries + 1
        assert [r["attempt"] for r in attempts] == list(range(len(attempts)))
        # The server met each sight of the request as planned, and each logged attempt is one of those
        # sights with its kind (or the engine's own time-out on it) ...
        sights = server_sights[judge].pop(request_digest(JUDGE_MODEL, messages).hex(), [])
        assert sights == [injected_fault(configs[judge], JUDGE_MODEL, messages, k) for k in range(len(sights))]
        sights_used += len(sights)
        injected.update((judge, kind) for kind in sights)
        logged = [attempt_kind(r) for r in attempts]
        chosen = sights_of_attempts(logged, sights)
        for was_late, c in zip(late_attempt(logged, sights, chosen), chosen):
            if was_late:
                late[(judge, "unseen" if c is None else sights[c])] += 1
                late_answers += c is not None and sights[c] in ANSWERED
        # ... and the engine stopped at the first answer, or after retries + 1 failures.
        assert all(kind not in ANSWERED for kind in logged[:-1]), key
        assert logged[-1] in ANSWERED or len(logged) == retries + 1, key
        # The judgment says what the last attempt implies: the server's verdict, or how it failed.
        outcome, verdict = expected_judgment(configs[judge], messages, logged, setups[judge])
        assert (judgment.outcome, judgment.verdict) == (outcome, verdict), key
        assert judgment.attempts == len(attempts)
        expected_outcomes[judge][outcome] += 1
        if outcome == "ok":
            expected_verdicts[judge][verdict] += 1
        if judge == "better":
            letters[key[0]][key[2]] = verdict

    total_attempts = len(rows)
    # None on a quiet machine; a few on a loaded one (dozens with python -X dev). Every check here
    # allows for them exactly; the bound only keeps them from crowding out the faults under test.
    assert sum(late.values()) <= max(5, total_attempts // 20), late
    # Every request the server saw was a logged one; its counters agree with its sights.
    assert server_sights == {"correct": {}, "better": {}}
    assert sum(s["requests"] for s in server_stats.values()) == sights_used
    assert total_attempts - late["correct", "unseen"] - late["better", "unseen"] == sights_used
    for judge, stats in server_stats.items():
        assert stats["max_attempts_per_request"] <= retries + 1
        for kind in FAULT_KINDS:
            assert stats["faults"][kind] == injected[(judge, kind)], (judge, kind, stats)
        answers_logged = sum(1 for k, v in calls.items() if k[1] == judge for r in v if r["response"] is not None)
        assert answers_logged <= stats["answered"] <= answers_logged + late_answers
    # The server injected every kind, at about the rate asked for.
    for kind in FAULT_KINDS:
        assert injected[("correct", kind)] + injected[("better", kind)] > 0, kind
    faults = sum(n for (_, kind), n in injected.items() if kind is not None)
    assert 0.15 <= faults / sights_used <= 0.25

    # Every outcome occurs, and the summary counts exactly the stored (and expected) judgments.
    assert {o for c in expected_outcomes.values() for o in c} == {"ok", "unparsed", "refused", "error"}
    for judge in ("correct", "better"):
        entry = summary["judges"][judge]
        assert entry["outcomes"] == {k: expected_outcomes[judge][k] for k in ("ok", "refused", "unparsed", "error")}
        assert entry["verdicts"] == dict(sorted(expected_verdicts[judge].items()))
    pair_verdicts = Counter(fixed_order_pair_verdict(o.get("12"), o.get("21")) for o in letters.values())
    assert summary["judges"]["better"]["pair_verdicts"] == {
        k: pair_verdicts[k] for k in ("A", "B", "tie", "inconsistent", "missing")
    }
    assert summary["cases_passed"] == expected_verdicts["correct"]["PASS"]
    assert summary["cases_failed"] == expected_verdicts["correct"]["FAIL"]
    assert summary["cases_missing"] == singles + pairs - summary["cases_passed"] - summary["cases_failed"]
    assert summary["calls"] == total_attempts
    assert summary["engine"]["retries"] == total_attempts - len(judgments)


@pytest.mark.usefixtures("each_http_client")
def test_2000_judge_calls_under_20_percent_faults(tmp_path, monkeypatch, capsys):
    # Two retries: a judgment fails for good when all three attempts fail, p = (0.2 * 7/9)^3 = 0.38 %, ~8 of 2,000.
    run_faulty_eval(tmp_path, monkeypatch, capsys, singles=1400, pairs=300, retries=2)


@pytest.mark.usefixtures("each_http_client")
def test_a_run_closes_its_http_clients(tmp_path, monkeypatch, capsys, caplog):
    """An HTTP client left open when the run's event loop ends is noise at best when collected
    ("Unclosed client session"; "Task exception was never retrieved ... Event loop is closed")."""
    with serve_in_thread(MockConfig(answers=PASSFAIL_ANSWERS)) as server:
        eval_path = write_eval(tmp_path, 3, 1, 0, server.url, server.url)
        code, _, err = run_cli(
            monkeypatch, capsys, "run", str(eval_path), "--db", str(tmp_path / "juge.db"), "--no-progress"
        )
    assert code == 0, err

    async def collect_while_a_loop_runs() -> None:
        gc.collect()
        await asyncio.sleep(0.05)

    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        asyncio.run(collect_while_a_loop_runs())
        gc.collect()
    for noise in ("Event loop is closed", "never retrieved", "Unclosed"):
        assert noise not in caplog.text
    assert not [w for w in caught if issubclass(w.category, ResourceWarning)]
