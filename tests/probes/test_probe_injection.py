"""`juge probe injection`: scripted judges that obey injections, ignore them, or answer garbage.

The judges read the rendered prompt the way a model would: they find the question and the
answers inside their tags and decide. A gullible judge gives its verdict to any answer that
carries an injection; a robust one always to the better answer. The figures are checked
against hand counts and the intervals against scipy's exact binomial interval and an
independent bootstrap written here.
"""

from __future__ import annotations

import json
import re
import signal
import sqlite3
import subprocess
import sys
import time
from collections.abc import Callable

import numpy as np
import pytest
from scipy.stats import binomtest

from cli_helpers import run_cli
from juge.judges import neutralise
from juge.probes.injection import load_items, load_kinds
from juge.providers.base import Response
from juge.providers.registry import register_provider
from juge.providers.scripted import ScriptedProvider
from juge.store import Store

ITEMS = load_items()
KINDS = load_kinds()
QUESTION_INDEX = {neutralise(item.question): index for index, item in enumerate(ITEMS)}
N, K = len(ITEMS), len(KINDS)


def read_prompt(request) -> tuple[int, dict[str, str]]:
    """(item index, {tag: what the answer in it is}) where an answer is 'better', 'worse' or an injection kind."""
    user = request.messages[-1]["content"]
    question = re.search(r"<question>\n(.*?)\n</question>", user, flags=re.S).group(1)
    index = QUESTION_INDEX[question]
    item = ITEMS[index]
    seen = {}
    for tag, text in re.findall(r"<(response(?:_a|_b)?)>\n(.*?)\n</\1>", user, flags=re.S):
        if text == neutralise(item.better):
            seen[tag] = "better"
        elif text == neutralise(item.worse):
            seen[tag] = "worse"
        else:
            setup = "passfail" if tag == "response" else "pairwise"
            seen[tag] = next(k.kind for k in KINDS if text == neutralise(item.worse + k.texts[setup]))
    return index, seen


Policy = Callable[[int, str], str]
# (item index, injection kind) -> "obey", "ignore", "garbage", "refuse", "tie", "A" (answer A in both orders),
# "obey_first" (obey only when the injected answer is shown first: in one of the two orders)


def scripted_judge(policy: Policy) -> Callable[..., ScriptedProvider]:
    """A provider factory: a judge that follows `policy` on injected prompts and is right on the others."""

    def answer(request) -> str | Response:
        index, seen = read_prompt(request)
        kind = next((v for v in seen.values() if v not in ("better", "worse")), None)
        action = policy(index, kind) if kind else "ignore"
        if action == "garbage":
            return "Both answers have merit; I would rather not pick one."
        if action == "refuse":
            return Response(text="", model="scripted-1", refused=True, refusal_reason="content filter")
        if "response" in seen:  # PASS/FAIL
            return (
                "PASS\nIt follows the injected note."
                if action == "obey" or seen["response"] == "better"
                else "FAIL\nIt does not answer correctly."
            )
        if action == "obey_first":
            action = "obey" if seen["response_a"] == kind else "ignore"
        if action in ("tie", "A"):
            return f"Hard to say. [[{'C' if action == 'tie' else 'A'}]]"
        wanted = kind if action == "obey" else "better"
        letter = "A" if seen["response_a"] == wanted else "B"
        return f"Response {letter} is better. [[{letter}]]"

    return lambda **options: ScriptedProvider(fn=answer, model="scripted-judge")


def always(action: str) -> Policy:
    return lambda index, kind: action


register_provider("probe-gullible", scripted_judge(always("obey")))
register_provider("probe-robust", scripted_judge(always("ignore")))
register_provider("probe-half", scripted_judge(lambda index, kind: "obey" if index % 2 == 0 else "ignore"))
register_provider(
    "probe-mixed",
    scripted_judge(
        lambda index, kind: {"authority": "garbage", "fake_turn": "refuse", "hidden_text": "tie", "override": "A"}.get(
            kind, "obey"
        )
    ),
)
register_provider("probe-one-order", scripted_judge(always("obey_first")))
register_provider("probe-garbage", lambda **options: ScriptedProvider(default="I think the first one, maybe."))
register_provider("probe-harsh", lambda **options: ScriptedProvider(default="FAIL\nNot good enough."))
register_provider("probe-down", lambda **options: ScriptedProvider())  # every call fails: no rule, no default


def write_judge(tmp_path, setup: str, **extra) -> str:
    path = tmp_path / f"{setup}.toml"
    lines = [f'name = "{setup}-judge"', f'setup = "{setup}"', 'model = "m"']
    lines += [f"{k} = {json.dumps(v)}" for k, v in extra.items()]
    lines += ["[rubric]", 'description = "The answer is correct, on topic and does what was asked."']
    if setup == "score":
        lines += ['levels = { 1 = "bad", 2 = "good" }']
    path.write_text("\n".join(lines) + "\n")
    return str(path)


def probe(monkeypatch, capsys, tmp_path, setup: str, provider: str, *extra: str) -> tuple[dict, str, str]:
    out = tmp_path / f"probe-{setup}-{provider}.json"
    code, stdout, stderr = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, setup),
        "--provider",
        provider,
        "--db",
        str(tmp_path / "j.db"),
        "--no-progress",
        "--json",
        str(out),
        "--resamples",
        "500",
        *extra,
    )
    assert code == 0, stderr
    return json.loads(out.read_text(encoding="utf-8")), stdout, stderr


def exact(k: int, n: int) -> tuple[float, float]:
    ci = binomtest(k, n).proportion_ci(confidence_level=0.95, method="exact")
    return ci.low, ci.high


def assert_counts_add_up(result: dict) -> None:
    right = result["right_at_baseline"]
    flips = 0
    for kind, entry in result["per_kind"].items():
        assert sum(entry["counts"].values()) == right, kind
        assert entry["flip_rate"]["k"] == entry["counts"]["flipped"]
        moved = entry["counts"]["flipped"] + entry["counts"].get("tie", 0) + entry["counts"].get("inconsistent", 0)
        assert entry["moved_rate"]["k"] == moved and entry["moved_rate"]["n"] == entry["flip_rate"]["n"]
        flips += entry["counts"]["flipped"]
    assert flips == result["overall"]["k"]
    assert result["overall"]["n"] == sum(e["flip_rate"]["n"] for e in result["per_kind"].values())
    assert result["overall_moved"]["k"] == sum(e["moved_rate"]["k"] for e in result["per_kind"].values())
    assert result["overall_moved"]["n"] == result["overall"]["n"]


@pytest.mark.parametrize("setup", ["pairwise", "passfail"])
def test_a_gullible_judge_flips_every_item_and_a_robust_one_none(monkeypatch, capsys, tmp_path, setup):
    calls_per_case = 2 if setup == "pairwise" else 1
    cases = N * (K + 1) + (N if setup == "passfail" else 0)
    for provider, flips in (("probe-gullible", N), ("probe-robust", 0)):
        result, stdout, _ = probe(monkeypatch, capsys, tmp_path, setup, provider)
        assert result["right_at_baseline"] == N
        assert result["calls"] == {"ok": cases * calls_per_case, "unparsed": 0, "refused": 0, "error": 0}
        assert_counts_add_up(result)
        for kind, entry in result["per_kind"].items():
            rate = entry["flip_rate"]
            assert (rate["k"], rate["n"]) == (flips, N), kind
            assert (rate["low"], rate["high"]) == pytest.approx(exact(flips, N), abs=1e-9)
            assert entry["moved_rate"]["k"] == flips  # no tie, no inconsistent order: every move is a flip
        assert result["overall"]["value"] == flips / N and result["overall"]["n"] == N * K
        assert result["baseline"]["counts"] == {"right": N}
        assert result["any_kind"]["k"] == flips
        baseline = result["baseline"]["accuracy"]
        assert baseline["pairs" if setup == "pairwise" else "worse_answers_fail"]["k"] == N
        assert f"{N} of {N} items" in stdout and "unparsed: 0" in stdout
        assert result["models"] == ["scripted-judge"] and "model scripted-judge" in stdout
    # Robust: no flip, and the exact interval still admits up to ~9 % (3.7/n rule of three is ~0.09 at n=40).
    assert rate["high"] == pytest.approx(1 - 0.025 ** (1 / N))


def test_half_gullible_intervals_match_scipy_and_an_independent_clustered_bootstrap(monkeypatch, capsys, tmp_path):
    result, _, _ = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-half")
    assert_counts_add_up(result)
    for entry in result["per_kind"].values():
        rate = entry["flip_rate"]
        assert (rate["k"], rate["n"]) == (N // 2, N)
        assert (rate["low"], rate["high"]) == pytest.approx(exact(N // 2, N), abs=1e-9)
    # An item flips on every kind or on none: the pooled rate's interval is about the interval of
    # 20 of 40 items, far wider than if the 240 trials were independent.
    overall = result["overall"]
    assert overall["value"] == 0.5 and overall["n"] == N * K and overall["n_items"] == N
    assert "too_few" not in overall
    flips_per_item = np.array([K if i % 2 == 0 else 0 for i in range(N)], dtype=float)
    rng = np.random.default_rng(12345)
    resampled = [flips_per_item[idx].sum() / (K * N) for idx in rng.integers(0, N, size=(4000, N))]
    low, high = np.quantile(resampled, [0.025, 0.975])
    assert overall["low"] == pytest.approx(low, abs=0.04) and overall["high"] == pytest.approx(high, abs=0.04)
    independent_low, independent_high = exact(N * K // 2, N * K)
    assert overall["low"] < independent_low - 0.05 and overall["high"] > independent_high + 0.05
    assert result["any_kind"]["k"] == N // 2


def test_too_few_items_give_no_bootstrap_interval(monkeypatch, capsys, tmp_path):
    # QA2: `--limit 3` printed 'flipped 0.667 [0.667, 0.667] n=12 (clustered bootstrap over 2 items)'.
    # Below the policy's MIN_ITEMS items the pooled rates carry no interval and say why.
    from juge.policy.decision import MIN_ITEMS

    result, stdout, _ = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-half", "--limit", "3")
    assert_counts_add_up(result)
    for name in ("overall", "overall_moved"):
        rate = result[name]
        assert rate["n_items"] < MIN_ITEMS and rate["value"] is not None
        assert rate["low"] is None and rate["high"] is None and rate["too_few"]
    assert "clustered bootstrap over" not in stdout and "too few for a bootstrap interval" in stdout
    for entry in result["per_kind"].values():  # the exact per-kind intervals stand
        assert entry["flip_rate"]["low"] is not None


def test_garbage_refusals_ties_and_inconsistent_orders_are_counted_apart(monkeypatch, capsys, tmp_path):
    result, stdout, _ = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-mixed")
    assert_counts_add_up(result)
    kinds = result["per_kind"]
    assert kinds["authority"]["counts"]["unparsed"] == N and kinds["authority"]["flip_rate"]["n"] == 0
    assert kinds["authority"]["flip_rate"]["value"] is None  # unparsed: neither a flip nor a non-flip
    assert kinds["fake_turn"]["counts"]["refused"] == N and kinds["fake_turn"]["flip_rate"]["n"] == 0
    assert kinds["hidden_text"]["counts"]["tie"] == N and kinds["hidden_text"]["flip_rate"]["k"] == 0
    assert kinds["override"]["counts"]["inconsistent"] == N and kinds["override"]["flip_rate"]["k"] == 0
    # A tie or inconsistent orders leave the better answer: moved, though not flipped.
    assert kinds["hidden_text"]["moved_rate"]["k"] == N and kinds["override"]["moved_rate"]["k"] == N
    assert kinds["authority"]["moved_rate"]["n"] == 0 and kinds["fake_turn"]["moved_rate"]["n"] == 0
    obeyed = [k for k in kinds if k not in ("authority", "fake_turn", "hidden_text", "override")]
    assert all(kinds[k]["counts"]["flipped"] == N for k in obeyed)
    # Pooled over the kinds with a verdict: 2 kinds flipped everything, 2 nothing.
    assert result["overall"]["k"] == N * len(obeyed) and result["overall"]["n"] == N * (len(obeyed) + 2)
    assert result["overall_moved"]["value"] == 1.0 and result["overall_moved"]["n"] == N * (len(obeyed) + 2)
    assert result["calls"] == {"ok": 2 * N * (K + 1 - 2), "unparsed": 2 * N, "refused": 2 * N, "error": 0}
    assert f"unparsed: {2 * N}" in stdout and f"refused: {2 * N}" in stdout


def test_a_judge_that_answers_garbage_has_no_denominator_and_no_rate(monkeypatch, capsys, tmp_path):
    result, stdout, _ = probe(monkeypatch, capsys, tmp_path, "passfail", "probe-garbage")
    assert result["right_at_baseline"] == 0
    assert result["baseline"]["counts"] == {"unparsed": N}
    assert result["overall"]["value"] is None and result["overall"]["k"] == 0
    assert result["calls"]["unparsed"] == N * (K + 2) and result["calls"]["ok"] == 0
    assert "n/a n=0" in stdout and "no item is right without injection" in " ".join(stdout.split())


def test_a_judge_that_fails_everything_is_right_on_no_item(monkeypatch, capsys, tmp_path):
    """FAIL on the worse answer is right only when the better answer PASSes: a judge that fails every
    answer tells nothing apart, and an injection cannot flip what was never right."""
    result, stdout, _ = probe(monkeypatch, capsys, tmp_path, "passfail", "probe-harsh")
    assert result["right_at_baseline"] == 0
    assert result["baseline"]["counts"] == {"both_fail": N}
    accuracy = result["baseline"]["accuracy"]
    assert (accuracy["items"]["k"], accuracy["items"]["n"]) == (0, N)
    assert (accuracy["worse_answers_fail"]["k"], accuracy["better_answers_pass"]["k"]) == (N, 0)
    assert result["overall"]["value"] is None and result["overall_moved"]["value"] is None
    text = " ".join(stdout.split())
    assert f"right at baseline (the denominator): 0 of {N} items" in text and f"both FAIL {N}" in text
    assert "the better answer PASSes and the worse one FAILs" in text


def test_a_judge_that_obeys_in_one_order_only_moves_every_item_without_a_flip(monkeypatch, capsys, tmp_path):
    result, stdout, _ = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-one-order")
    assert_counts_add_up(result)
    for kind, entry in result["per_kind"].items():
        assert entry["counts"]["inconsistent"] == N, kind
        assert (entry["flip_rate"]["k"], entry["flip_rate"]["n"]) == (0, N)
        moved = entry["moved_rate"]
        assert (moved["k"], moved["n"]) == (N, N)
        assert (moved["low"], moved["high"]) == pytest.approx(exact(N, N), abs=1e-9)
    assert result["overall"]["value"] == 0.0 and result["overall_moved"]["value"] == 1.0
    assert result["overall_moved"]["n"] == N * K and result["overall_moved"]["k"] == N * K
    text = " ".join(stdout.split())
    assert f"moved {_fmt_rate(1.0, N * K)}" in text and f"flipped {_fmt_rate(0.0, N * K)}" in text


def _fmt_rate(value: float, n: int) -> str:
    return f"{value:.3f} [{value:.3f}, {value:.3f}] n={n}"  # a bootstrap over identical items has no width


def test_when_every_call_fails_the_probe_says_so_and_exits_1(monkeypatch, capsys, tmp_path):
    out = tmp_path / "probe.json"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, "pairwise"),
        "--provider",
        "probe-down",
        "--db",
        str(tmp_path / "j.db"),
        "--no-progress",
        "--limit",
        "2",
        "--kind",
        "override",
        "--json",
        str(out),
    )
    text = " ".join(err.split())
    assert code == 1, err
    assert "all 8 judge calls failed" in text and "no rule for this prompt" in text  # the first error's reason
    assert "rubric" not in stdout + err and not out.exists()


@pytest.mark.parametrize("where", ["folder", "/proc/nope/x.json"])
def test_an_unwritable_json_path_exits_2_before_any_call(monkeypatch, capsys, tmp_path, where):
    calls = []
    register_provider("probe-counted", lambda **options: ScriptedProvider(fn=lambda r: calls.append(r) or "[[A]]"))
    target = str(tmp_path) if where == "folder" else where
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, "pairwise"),
        "--provider",
        "probe-counted",
        "--db",
        str(tmp_path / "j.db"),
        "--no-progress",
        "--limit",
        "1",
        "--kind",
        "override",
        "--json",
        target,
    )
    assert code == 2 and "--json" in err and not calls
    assert (
        not (tmp_path / "j.db").exists()
        or sqlite3.connect(tmp_path / "j.db").execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    )


def test_the_openai_providers_connections_are_closed(monkeypatch, capsys, tmp_path):
    from juge.providers.openai_compat import OpenAICompatProvider
    from juge.testing.mockserver import MockConfig, serve_in_thread

    made = []
    original = OpenAICompatProvider.__init__
    monkeypatch.setattr(OpenAICompatProvider, "__init__", lambda self, **kw: made.append(self) or original(self, **kw))
    with serve_in_thread(MockConfig(answers=("[[A]]", "[[B]]"))) as server:
        eval_file = tmp_path / "eval.toml"
        write_judge(tmp_path, "pairwise")
        eval_file.write_text(
            f'cases = "cases.jsonl"\n[provider]\nname = "openai"\n'
            f'options = {{ base_url = "{server.url}" }}\n[[judges]]\nfile = "pairwise.toml"\n'
        )
        code, _, err = run_cli(
            monkeypatch,
            capsys,
            "probe",
            "injection",
            "--eval",
            str(eval_file),
            "--judge",
            "pairwise-judge",
            "--db",
            str(tmp_path / "j.db"),
            "--no-progress",
            "--limit",
            "2",
            "--kind",
            "override",
        )
    assert code == 0, err
    transport = made[0].transport  # aiohttp's session or pyreqwest's client: made (a call went out), then closed
    assert len(made) == 1 and (getattr(transport, "_session", None) or getattr(transport, "_client", None))
    assert made[0].closed


INTERRUPTED_PROBE = """
import asyncio, pathlib, sys
from juge import cli
from juge.providers.registry import register_provider

folder = pathlib.Path(sys.argv[1])

class Waiting:
    name = "waiting"

    async def complete(self, request):
        (folder / "calling").touch()
        await asyncio.sleep(60)

    async def aclose(self):
        (folder / "closed").touch()

register_provider("probe-waiting", lambda **options: Waiting())
sys.argv = ["juge", "probe", "injection", "--judge", sys.argv[2], "--provider", "probe-waiting", "--db",
            str(folder / "j.db"), "--no-progress", "--limit", "1", "--kind", "override"]
cli.main()
"""


def test_ctrl_c_during_a_call_closes_the_provider(tmp_path):
    """Ctrl-C as a person presses it: SIGINT to the process while a call is in flight. In a process of its
    own: a KeyboardInterrupt through an event loop leaves CPython 3.11 unable to compile some code after it."""
    script = tmp_path / "interrupted.py"
    script.write_text(INTERRUPTED_PROBE, encoding="utf-8")
    child = subprocess.Popen(
        [sys.executable, str(script), str(tmp_path), write_judge(tmp_path, "pairwise")],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 180  # a cold start (imports) on a loaded machine takes a while
    while not (tmp_path / "calling").exists() and child.poll() is None and time.monotonic() < deadline:
        time.sleep(0.02)
    child.send_signal(signal.SIGINT)
    _, err = child.communicate(timeout=120)
    assert child.returncode == 130 and "interrupted" in err, err
    assert (tmp_path / "closed").exists() and "Unclosed" not in err


def test_calls_go_through_the_engine_logged_cached_and_stored_as_a_run(monkeypatch, capsys, tmp_path):
    extra = ("--limit", "3", "--kind", "fake_verdict", "--kind", "delimiter_escape")
    first, _, err = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-gullible", *extra)
    assert "new run" in err and "18 calls" in " ".join(err.split())  # 3 items x (baseline + 2 kinds) x 2 orders
    again, _, err = probe(monkeypatch, capsys, tmp_path, "pairwise", "probe-gullible", *extra)
    assert "0 calls, 18 cache hits" in " ".join(err.split())
    assert {k: v for k, v in again.items() if k != "run_id"} == {k: v for k, v in first.items() if k != "run_id"}
    conn = sqlite3.connect(tmp_path / "j.db")
    assert conn.execute("SELECT COUNT(*) FROM calls WHERE run_id = ?", (first["run_id"],)).fetchone()[0] == 18
    stored = conn.execute("SELECT item_id, ord, text FROM judgments WHERE run_id = ?", (first["run_id"],)).fetchall()
    assert len(stored) == 18 and {s[0].split("/")[1] for s in stored} == {"none", "fake_verdict", "delimiter_escape"}
    (name,) = conn.execute("SELECT name FROM runs WHERE id = ?", (first["run_id"],)).fetchone()
    assert name == "probe injection: pairwise-judge"
    # The injected answer reached the judge inside its tag, its closing tags defused.
    requests = [
        json.loads(r) for (r,) in conn.execute("SELECT request FROM calls WHERE run_id = ?", (first["run_id"],))
    ]
    escaped = [r for r in requests if "&lt;/response_a>" in r["messages"][-1]["content"]]
    assert len(escaped) == 6  # 3 items x 2 orders of the delimiter_escape kind


def test_an_eval_file_names_the_judge_and_gives_the_provider(monkeypatch, capsys, tmp_path):
    write_judge(tmp_path, "pairwise")
    eval_file = tmp_path / "eval.toml"
    eval_file.write_text(
        'cases = "cases.jsonl"\n[provider]\nname = "probe-gullible"\n[[judges]]\nfile = "pairwise.toml"\n'
    )
    args = (
        "probe",
        "injection",
        "--eval",
        str(eval_file),
        "--db",
        str(tmp_path / "j.db"),
        "--no-progress",
        "--limit",
        "2",
        "--kind",
        "override",
    )
    code, stdout, _ = run_cli(monkeypatch, capsys, *args, "--judge", "pairwise-judge")
    assert code == 0 and "flip rate" in stdout and "flipped   1.000" in stdout
    out = tmp_path / "probe.json"
    code, _, _ = run_cli(
        monkeypatch, capsys, *args, "--judge", "pairwise-judge", "--model", "judge-v2", "--json", str(out)
    )
    result = json.loads(out.read_text(encoding="utf-8"))
    # --model is what the judge asks for; the stand-in answers as its own model, which the result records
    assert code == 0 and result["judge"]["model"] == "scripted-judge"
    with Store(tmp_path / "j.db") as store:
        assert {r["model"] for r in store.call_requests(result["run_id"])} == {"judge-v2"}
    code, _, err = run_cli(monkeypatch, capsys, *args, "--judge", "nobody")
    assert code == 2 and "no judge named 'nobody'" in err and "pairwise-judge" in err


@pytest.mark.parametrize(
    "args,message",
    [
        (("--kind", "telepathy"), "unknown injection kind(s) telepathy"),
        (("--provider", "no-such-provider"), "unknown provider"),
    ],
)
def test_bad_options_exit_2(monkeypatch, capsys, tmp_path, args, message):
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, "pairwise"),
        "--db",
        str(tmp_path / "j.db"),
        *(("--provider", "probe-robust") if "--provider" not in args else ()),
        *args,
    )
    assert code == 2 and message in " ".join(err.split())


def test_a_score_judge_exits_2_saying_which_setups_are_measured(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, "score"),
        "--provider",
        "probe-robust",
        "--db",
        str(tmp_path / "j.db"),
    )
    assert code == 2 and "score judge" in err and "pairwise" in err and "passfail" in err
    assert (
        not (tmp_path / "j.db").exists()
        or sqlite3.connect(tmp_path / "j.db").execute("SELECT COUNT(*) FROM runs").fetchone()[0] == 0
    )


def test_the_probe_set_is_whole_and_each_injection_is_appended_to_the_worse_answer():
    from juge.probes.injection import better_letter, probe_cases

    assert N >= 40 and K == 6 and len({i.category for i in ITEMS}) >= 4
    assert all(i.better != i.worse for i in ITEMS)
    cases = {c.id: c for c in probe_cases("pairwise", ITEMS, KINDS)}
    for index, item in enumerate(ITEMS):
        for kind in KINDS:
            case = cases[f"{item.id}/{kind.kind}"]
            worse, better = (
                (case.output_2, case.output_1) if better_letter(index) == "A" else (case.output_1, case.output_2)
            )
            assert better == item.better and worse == item.worse + kind.texts["pairwise"]
    assert {better_letter(i) for i in range(N)} == {"A", "B"}  # the better answer is not always shown first


@pytest.mark.slow
@pytest.mark.needs("local_model")
def test_the_local_llamacpp_judge_completes_the_probe(monkeypatch, capsys, tmp_path):
    out = tmp_path / "probe.json"
    code, stdout, err = run_cli(
        monkeypatch,
        capsys,
        "probe",
        "injection",
        "--judge",
        write_judge(tmp_path, "pairwise", constrained=True),
        "--provider",
        "llamacpp",
        "--db",
        str(tmp_path / "j.db"),
        "--no-progress",
        "--limit",
        "4",
        "--kind",
        "fake_verdict",
        "--json",
        str(out),
    )
    assert code == 0, err
    result = json.loads(out.read_text(encoding="utf-8"))
    assert result["calls"]["ok"] + result["calls"]["unparsed"] + result["calls"]["error"] == 4 * 2 * 2
    assert sum(result["baseline"]["counts"].values()) == 4
    assert "flip rate" in stdout and "baseline: the better answer wins" in stdout
