"""The system under test inside `juge run`: failures, refusals, prompt identity, multi-turn input, cost, locks."""

import json
import threading
from pathlib import Path

import pytest

from juge.config import ProviderSpec, load_eval
from juge.errors import InputError
from juge.providers import ProviderError, Request, Response, register_provider
from juge.runner import Providers, run_eval, run_lock
from juge.store import Store


class SystemUnderTest:
    """A scripted system: fails on 'boom', refuses on 'blocked' (no text) and 'decline' (with text)."""

    name = "sut"
    seen: list[tuple[dict, ...]] = []

    def __init__(self, **_):
        pass

    async def complete(self, request: Request) -> Response:
        SystemUnderTest.seen.append(request.messages)
        prompt = request.messages[-1]["content"]
        if "boom" in prompt:
            raise ProviderError("HTTP 500: down", retryable=False, status=500)
        if "blocked" in prompt:
            return Response(text="", model="sut-v1", refused=True, refusal_reason="content filter")
        if "decline" in prompt:
            return Response(
                text="I can't help with that.",
                model="sut-v1",
                refused=True,
                refusal_reason="refusal",
                tokens_in=10,
                tokens_out=5,
            )
        return Response(text=f"answer to {prompt}", model="sut-v1", tokens_in=10, tokens_out=5)


register_provider("sut-test", SystemUnderTest)


def write_eval(tmp_path: Path, cases: list[dict], template: str = "Customer: {{ input }}", extra: str = "") -> Path:
    (tmp_path / "cases.jsonl").write_text("".join(json.dumps(c) + "\n" for c in cases))
    (tmp_path / "system.j2").write_text(template)
    path = tmp_path / "eval.toml"
    path.write_text(f"""
cases = "cases.jsonl"
[system]
model = "sut-v1"
template = "system.j2"
provider = {{ name = "sut-test" }}
[[judges]]
name = "pf"
setup = "passfail"
description = "Is it helpful?"
model = "judge-1"
provider = "scripted"
provider_options = {{ default = "PASS\\nHelpful.", model = "judge-1" }}
[prices]
"sut-v1" = {{ input = 1000000, output = 1000000 }}
"judge-1" = {{ input = 0, output = 0 }}
{extra}
""")
    return path


def test_system_failure_is_missing_not_fatal_and_refusal_text_is_judged(tmp_path):
    path = write_eval(
        tmp_path,
        [
            {"id": "ok", "question": "hours?"},
            {"id": "e1", "question": "boom"},
            {"id": "r1", "question": "blocked"},
            {"id": "r2", "question": "decline"},
        ],
    )
    with Store(tmp_path / "j.db") as store:
        result = run_eval(load_eval(path), store, progress=False)
        s = result.summary
        judged = {j.item_id for j in store.judgments(result.run_id)}
        outputs = store.outputs(result.run_id)
    assert judged == {"ok", "r2"}  # the refusal with text is the output under test
    assert outputs[("e1", "output")]["outcome"] == "error" and "HTTP 500" in outputs[("e1", "output")]["reason"]
    assert (s["cases_passed"], s["cases_missing"]) == (2, 2)
    assert s["system_errors"] == 1
    # 10 + 5 tokens at $1 per token for each of the two system answers that have a price; judges are free.
    assert s["cost"]["system"] == pytest.approx(30.0) and s["cost"]["judges"] == 0


def test_changed_system_prompt_is_a_new_run_not_a_resume(tmp_path):
    path = write_eval(tmp_path, [{"id": "a", "question": "q"}])
    with Store(tmp_path / "j.db") as store:
        first = run_eval(load_eval(path), store, progress=False)
        store.conn.execute("UPDATE runs SET status = 'running'")  # as if it had been interrupted
        (tmp_path / "system.j2").write_text("Version two: {{ input }}")
        second = run_eval(load_eval(path), store, progress=False)
        assert not second.resumed and second.run_id != first.run_id
        prompts = {r["template_hash"] for r in (s["config"]["system"] for s in store.list_runs())}
        assert len(prompts) == 2


def test_multi_turn_case_keeps_history_and_renders_the_last_user_turn(tmp_path):
    SystemUnderTest.seen.clear()
    case = {
        "id": "m",
        "messages": [
            {"role": "user", "content": "Hi, I want cake"},
            {"role": "assistant", "content": "What kind?"},
            {"role": "user", "content": "Chocolate please"},
        ],
    }
    path = write_eval(tmp_path, [case])
    with Store(tmp_path / "j.db") as store:
        run_eval(load_eval(path), store, progress=False)
    [messages] = SystemUnderTest.seen
    assert [m["content"] for m in messages] == ["Hi, I want cake", "What kind?", "Customer: Chocolate please"]


def test_config_error_stops_before_any_system_call(tmp_path):
    SystemUnderTest.seen.clear()
    path = write_eval(tmp_path, [{"id": "a", "question": "q"}])
    text = path.read_text().replace('description = "Is it helpful?"', 'description = "Right?"\nreference = true')
    path.write_text(text)
    with Store(tmp_path / "j.db") as store:
        with pytest.raises(InputError, match="field 'reference'"):
            run_eval(load_eval(path), store, progress=False)
        assert store.list_runs() == [] and SystemUnderTest.seen == []


def test_judge_naming_the_eval_provider_inherits_its_options_and_typos_are_errors(tmp_path):
    providers = Providers(ProviderSpec(name="openai", options={"base_url": "http://127.0.0.1:9/v1"}), tmp_path)
    judge_side = providers.get(ProviderSpec(name="openai"))
    assert judge_side.name == "openai@http://127.0.0.1:9/v1"
    with pytest.raises(InputError, match="base_ulr"):
        Providers(ProviderSpec(name="openai", options={"base_ulr": "http://x"}), tmp_path).get(None)


def test_a_second_process_on_the_same_eval_is_refused_while_the_first_holds_the_lock(tmp_path):
    db = tmp_path / "j.db"
    db.touch()
    held = threading.Event()
    release = threading.Event()

    def holder():
        with run_lock(db, "eval-1"):
            held.set()
            release.wait(300)  # set in `finally` below: the bound is for a test that hangs

    t = threading.Thread(target=holder)
    t.start()
    try:
        assert held.wait(300)
        with pytest.raises(InputError, match="another juge run"):
            with run_lock(db, "eval-1"):
                pass
        with run_lock(db, "eval-2"):  # another eval is not blocked
            pass
    finally:
        release.set()
        t.join()
    with run_lock(db, "eval-1"):  # released when the holder is done
        pass


def test_system_failure_never_judges_the_case_files_own_output(tmp_path):
    path = write_eval(
        tmp_path,
        [
            {"id": "e1", "question": "boom", "output": "an old answer from the file"},
            {"id": "ok", "question": "fine", "output": "another old answer"},
        ],
    )
    with Store(tmp_path / "j.db") as store:
        result = run_eval(load_eval(path), store, progress=False)
        judged = {j.item_id for j in store.judgments(result.run_id)}
    assert judged == {"ok"}
    assert result.summary["cases_missing"] == 1


def test_unjudged_cases_of_an_interrupted_run_are_missing_not_passed(tmp_path):
    from juge.runs.summary import summarize

    path = write_eval(
        tmp_path,
        [{"id": f"c{i}", "question": f"q{i}"} for i in range(4)],
        extra='[[checks]]\nkind = "length"\nmax_chars = 1000\n',
    )
    config = load_eval(path)
    with Store(tmp_path / "j.db") as store:
        result = run_eval(config, store, progress=False)
        store.conn.execute("DELETE FROM judgments WHERE item_id IN ('c2', 'c3')")  # as if killed part-way
        s = summarize(store, result.run_id, config.judges)
    assert (s["cases_passed"], s["cases_missing"]) == (2, 2)


def test_cache_tells_provider_configurations_apart(tmp_path):
    path = write_eval(tmp_path, [{"id": "a", "question": "q"}])
    with Store(tmp_path / "j.db") as store:
        first = run_eval(load_eval(path), store, progress=False)
        path.write_text(path.read_text().replace('default = "PASS\\nHelpful."', 'default = "FAIL\\nNot helpful."'))
        second = run_eval(load_eval(path), store, progress=False)
        verdicts = [store.judgments(r.run_id)[0].verdict for r in (first, second)]
    assert verdicts == ["PASS", "FAIL"]  # the edited rule is asked, not answered from the old cache
    assert second.engine_stats.get("calls", 0) >= 1


def test_cached_answers_cost_nothing_in_a_new_run(tmp_path):
    path = write_eval(tmp_path, [{"id": "a", "question": "q"}])
    with Store(tmp_path / "j.db") as store:
        first = run_eval(load_eval(path), store, progress=False)
        again = run_eval(load_eval(path), store, progress=False, resume=False)
    assert first.summary["cost"]["system"] == pytest.approx(15.0)
    assert again.engine_stats.get("calls", 0) == 0 and again.summary["cost"]["total"] == 0


def test_replay_is_never_served_from_the_cache(tmp_path):
    from juge.config import EvalConfig, EvalSpec

    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n')
    (tmp_path / "judge.toml").write_text('name = "pf"\nsetup = "passfail"\ndescription = "ok?"\n')
    rec_a = tmp_path / "a.jsonl"
    rec_a.write_text(
        '{"item_id": "a", "judge": "pf", "template": "passfail-v1", "text": "PASS\\nFine.", "model": "m"}\n'
    )
    rec_b = tmp_path / "b.jsonl"
    rec_b.write_text(
        '{"item_id": "zzz", "judge": "pf", "template": "passfail-v1", "text": "PASS\\nFine.", "model": "m"}\n'
    )
    spec = EvalSpec(cases=str(tmp_path / "cases.jsonl"), judges=[{"file": str(tmp_path / "judge.toml")}])
    config = EvalConfig(spec, tmp_path, "cli", b"x")
    with Store(tmp_path / "j.db") as store:
        ok = run_eval(
            config, store, progress=False, provider_override=ProviderSpec(name="replay", options={"path": str(rec_a)})
        )
        miss = run_eval(
            config, store, progress=False, provider_override=ProviderSpec(name="replay", options={"path": str(rec_b)})
        )
        assert store.judgments(ok.run_id)[0].outcome == "ok"
        assert store.judgments(miss.run_id)[0].outcome == "error"  # a miss, not the other recording's answer
        assert miss.run_id != ok.run_id  # another provider is another run, not a resume


def test_gate_without_a_pass_rate_is_a_configuration_error(tmp_path):
    import subprocess
    import sys

    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q", "output": "o"}\n')
    (tmp_path / "eval.toml").write_text(
        'cases = "cases.jsonl"\n[[judges]]\nname = "s"\nsetup = "score"\ndescription = "good?"\n'
        'levels = { 1 = "bad", 2 = "ok", 3 = "good" }\nprovider = "scripted"\n'
        'provider_options = { default = "Fine.\\nNOTE: 3" }\n[gate]\nmin_pass_rate = 0.5\n'
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "juge.cli",
            "run",
            str(tmp_path / "eval.toml"),
            "--db",
            str(tmp_path / "j.db"),
            "--no-progress",
        ],
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 2 and "gate.min_pass_rate" in proc.stderr and "Traceback" not in proc.stderr


def test_a_provider_bug_fails_the_call_not_the_run(tmp_path, store):
    import asyncio

    from juge.data.records import Case
    from juge.engine import Engine, EngineOptions, build_tasks
    from juge.judges import judge_from_dict
    from juge.providers import make_provider

    def broken(request):
        raise IndexError("list index out of range")

    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "ok?"})
    case = Case(id="a", question="q", output="o")
    run_id = store.create_run(dataset_hash="d", juge_version="t", cases=[case])
    engine = Engine(store, EngineOptions(progress=False))
    asyncio.run(engine.run_tasks(run_id, build_tasks([case], [judge]), {"pf": make_provider("scripted", fn=broken)}))
    [j] = store.judgments(run_id)
    assert j.outcome == "error" and "IndexError" in j.reason


def test_pair_cases_get_no_system_output(tmp_path):
    """A pair case already carries the two answers under comparison: the system is not asked for a third."""
    SystemUnderTest.seen.clear()
    path = write_eval(
        tmp_path,
        [{"id": "single", "question": "hours?"}, {"id": "pair", "question": "q", "output_1": "a", "output_2": "b"}],
    )
    with Store(tmp_path / "j.db") as store:
        result = run_eval(load_eval(path), store, progress=False)
        outputs = store.outputs(result.run_id)
    assert len(SystemUnderTest.seen) == 1 and "hours?" in SystemUnderTest.seen[0][-1]["content"]
    assert set(outputs) == {("single", "output")}
