"""`juge tune` end to end through the engine and the store, with scripted judges whose accuracy
depends on what the prompt holds."""

import hashlib
import json
import tomllib

import pytest

from juge.providers.base import Request, Response
from juge.providers.scripted import ScriptedProvider
from juge.store import Store
from juge.tune import tune

JUDGE = """\
name = "helpful"
setup = "passfail"
model = "m1"
provider = "scripted"
description = "The answer solves the user's problem."
"""


def write_data(tmp_path, n_groups=60, holdout=20, bob_misses=0):
    """Items whose outputs carry their truth; two raters who agree, except that with `bob_misses` n bob
    calls every n-th failure a PASS (so one person catches fewer of the other's failures)."""
    items, labels = [], []
    for g in range(n_groups + holdout):
        truth = "PASS" if (g * 7) % 3 else "FAIL"
        item = {
            "id": f"i{g}",
            "group": f"q{g}",
            "split": "dev" if g < n_groups else "holdout",
            "question": f"Question {g}?",
            "output": f"Answer {g}. TRUTH:{truth}",
            "reference": f"Ref {g}.",
        }
        items.append(item)
        bob = "PASS" if bob_misses and truth == "FAIL" and g % bob_misses == 0 else truth
        labels += [
            {"item_id": f"i{g}", "rater_id": r, "label": label, "explanation": f"Rater {r} saw it."}
            for r, label in (("ann", truth), ("bob", bob))
        ]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(i) + "\n" for i in items))
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    (tmp_path / "judge.toml").write_text(JUDGE)
    return tmp_path / "judge.toml", tmp_path / "items.jsonl", tmp_path / "labels.jsonl"


def scripted(base: float, fewshot: float, reference: float = 0.0, proposal: float | None = None) -> ScriptedProvider:
    """Right with probability `base`, or `fewshot` when the prompt holds worked examples, minus
    `reference` when it holds the reference answer; decided by a hash of the prompt (deterministic)."""

    def answer(request: Request) -> Response:
        system, user = request.messages[0]["content"], request.messages[-1]["content"]
        words = sum(len(m["content"].split()) for m in request.messages)
        if system.startswith("You improve the rubric"):
            return Response(text="<rubric>Read the TRUTH marker.</rubric>", model="m1", tokens_in=words, tokens_out=5)
        if "<response>" not in user:  # solve-first: the judge's own answer
            return Response(text="My own answer.", model="m1", tokens_in=words, tokens_out=3)
        truth = "PASS" if "TRUTH:PASS" in user else "FAIL"
        accuracy = (fewshot if "Worked examples" in system else base) - (reference if "<reference>" in user else 0)
        if proposal is not None and "Read the TRUTH marker." in system:
            accuracy = proposal
        draw = int(hashlib.sha256((system + user).encode()).hexdigest()[:8], 16) / 16**8
        verdict = truth if draw < accuracy else ("FAIL" if truth == "PASS" else "PASS")
        text = verdict if "exactly one word" in user else f"{verdict}\nIt does or does not, as said."
        return Response(text=text, model="m1", tokens_in=words, tokens_out=len(text.split()))

    return ScriptedProvider(fn=answer)


def test_tune_picks_few_shot_when_it_helps_and_reports_out_of_fold(tmp_path):
    judge, items, labels = write_data(tmp_path)
    result = tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "tuned",
        provider=scripted(0.55, 0.95, 0.3),
        db=tmp_path / "j.db",
        folds=4,
        n_resamples=400,
    )
    by_name = {c.name: c for c in result.candidates}
    assert set(by_name) >= {
        "as-given",
        "fewshot-2",
        "fewshot-4",
        "fewshot-8",
        "verdict-only",
        "reference",
        "solve-first",
    }
    assert result.chosen.startswith("fewshot-")
    assert by_name["reference"].agreement["value"] < by_name["as-given"].agreement["value"]
    assert not by_name["as-given"].within_noise
    # figures: in-sample is the chosen candidate's dev kappa (PASS/FAIL); out-of-fold is not above it here
    chosen = by_name[result.chosen]
    assert result.measure == "kappa" and result.in_sample == chosen.kappa
    assert result.optimism == pytest.approx(result.in_sample["value"] - result.out_of_fold["value"])
    # outputs: the tuned judge loads, carries its examples from dev only and says where it came from
    from juge.judges import load_judge

    tuned = load_judge(tmp_path / "tuned" / "judge.toml")
    data = tomllib.loads((tmp_path / "tuned" / "judge.toml").read_text())
    assert data["tuned"]["variant"] == result.chosen
    assert len(tuned.rubric.examples) == int(result.chosen.split("-")[1])
    assert all(int(i[1:]) < 60 for i in data["tuned"]["examples"])  # dev items only
    saved = json.loads((tmp_path / "tuned" / "tuning.json").read_text())
    assert saved["chosen"] == result.chosen and saved["schema_version"] == 2
    assert "out-of-fold" in (tmp_path / "tuned" / "TUNING.md").read_text()
    html = (tmp_path / "tuned" / "report.html").read_text()
    assert f"chosen {result.chosen}" in html and html.count("<tr><td>") >= len(result.candidates) + 3


def test_tune_prefers_the_cheaper_candidate_within_noise(tmp_path):
    # bob misses some failures, so every candidate catches at least as many as one person of another's
    judge, items, labels = write_data(tmp_path, bob_misses=2)
    # few-shot is barely better than the judge as given: not worth its longer prompt
    result = tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "tuned",
        provider=scripted(0.80, 0.82),
        db=tmp_path / "j.db",
        folds=4,
        n_resamples=400,
    )
    by_name = {c.name: c for c in result.candidates}
    chosen = by_name[result.chosen]
    assert chosen.within_noise
    assert chosen.cost_per_item == min(c.cost_per_item for c in result.candidates if c.within_noise)
    assert not result.chosen.startswith("fewshot-")


def test_few_shot_examples_never_come_from_the_judged_fold(tmp_path):
    judge, items, labels = write_data(tmp_path, n_groups=24, holdout=0)
    seen: list[tuple[str, str]] = []
    inner = scripted(0.6, 0.9)

    async def spy(request: Request) -> Response:
        seen.append((request.messages[0]["content"], request.messages[-1]["content"]))
        return await ScriptedProvider.complete(inner, request)

    inner.complete = spy  # type: ignore[method-assign]
    tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "tuned",
        provider=inner,
        db=tmp_path / "j.db",
        folds=3,
        n_resamples=200,
        shots=(4,),
    )
    shown = 0
    for system, user in seen:
        if "Worked examples" in system:
            judged = user.split("Answer ")[1].split(".")[0]
            assert f"Answer {judged}." not in system  # the judged item is never its own example
            shown += 1
    assert shown == 24  # each dev item judged once by its fold's few-shot judge


def test_tune_resumes_from_the_cache(tmp_path):
    judge, items, labels = write_data(tmp_path, n_groups=20, holdout=0)
    first_provider = scripted(0.6, 0.9)
    first = tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "a",
        provider=first_provider,
        db=tmp_path / "j.db",
        folds=2,
        n_resamples=200,
        shots=(2,),
    )
    again_provider = scripted(0.6, 0.9)
    again = tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "b",
        provider=again_provider,
        db=tmp_path / "j.db",
        folds=2,
        n_resamples=200,
        shots=(2,),
    )
    assert first_provider.calls > 0 and again_provider.calls == 0
    assert again.chosen == first.chosen and again.out_of_fold == first.out_of_fold
    with Store(tmp_path / "j.db") as store:
        assert len(store.list_runs()) >= 1


CLI_JUDGE = """\
name = "helpful"
setup = "passfail"
model = "m1"
description = "The answer solves the user's problem."

[provider]
name = "scripted"

[[provider.options.responses]]
match = "TRUTH:PASS(?s:.*)exactly one word"
text = "PASS"

[[provider.options.responses]]
match = "TRUTH:FAIL(?s:.*)exactly one word"
text = "FAIL"

[[provider.options.responses]]
match = "TRUTH:PASS"
text = "PASS\\nIt solves it."

[[provider.options.responses]]
match = "TRUTH:FAIL"
text = "FAIL\\nIt does not."

[[provider.options.responses]]
match = "."
text = "My own answer."
"""


def test_cli_tune_writes_its_outputs_and_json(tmp_path):
    from typer.testing import CliRunner

    from juge.cli import app

    judge, items, labels = write_data(tmp_path, n_groups=16, holdout=0)
    judge.write_text(CLI_JUDGE)
    out, js = tmp_path / "tuned", tmp_path / "t.json"
    args = [
        "tune",
        "--judge",
        str(judge),
        "--items",
        str(items),
        "--labels",
        str(labels),
        "--out",
        str(out),
        "--folds",
        "2",
        "--shots",
        "2",
        "--resamples",
        "200",
        "--no-progress",
        "--json",
        str(js),
        "--db",
        str(tmp_path / "j.db"),
    ]
    res = CliRunner().invoke(app, args)
    assert res.exit_code == 0, res.output
    data = json.loads(js.read_text())
    assert data == json.loads((out / "tuning.json").read_text())
    assert all(c["agreement"]["value"] == 1.0 for c in data["candidates"] if c["name"] != "solve-first")
    assert data["out_of_fold"]["value"] == 1.0 and data["optimism"] == 0.0
    # every candidate is perfect: the cheapest one is chosen, the constrained verdict alone
    assert data["chosen"] == "verdict-only"


def test_cli_tune_without_a_split_is_exit_2_and_writes_nothing(tmp_path, monkeypatch):
    from juge.cli import main

    judge, items, labels = write_data(tmp_path, n_groups=10, holdout=0)
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    items.write_text("".join(json.dumps({k: v for k, v in r.items() if k != "split"}) + "\n" for r in rows))
    monkeypatch.setattr(
        "sys.argv",
        [
            "juge",
            "tune",
            "--judge",
            str(judge),
            "--items",
            str(items),
            "--labels",
            str(labels),
            "--out",
            str(tmp_path / "tuned"),
            "--db",
            str(tmp_path / "j.db"),
        ],
    )
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 2
    assert not (tmp_path / "tuned").exists()


def test_propose_makes_candidates_from_other_folds_disagreements(tmp_path):
    judge, items, labels = write_data(tmp_path, n_groups=30, holdout=0)
    provider = scripted(0.6, 0.6, proposal=0.97)
    asked: list[str] = []
    inner = provider.fn

    def spy(request: Request) -> Response:
        if request.messages[0]["content"].startswith("You improve the rubric"):
            asked.append(request.messages[-1]["content"])
        return inner(request)

    provider.fn = spy
    result = tune(
        judge,
        items=items,
        labels=labels,
        out=tmp_path / "tuned",
        provider=provider,
        db=tmp_path / "j.db",
        folds=3,
        n_resamples=300,
        shots=(),
        propose=2,
    )
    assert {"proposal-1", "proposal-2"} <= {c.name for c in result.candidates}
    assert result.chosen.startswith("proposal-")
    assert len(asked) == (3 + 1) * 2  # each fold's training set and all of dev, two proposals each
    assert all(prompt.count("<case>") <= 6 for prompt in asked)
    tuned = tomllib.loads((tmp_path / "tuned" / "judge.toml").read_text())
    assert tuned["rubric"]["description"] == "Read the TRUTH marker."


def test_tune_test_is_once_per_machine_across_stores_and_renamed_copies(tmp_path):
    judge, items, labels = write_data(tmp_path, n_groups=20, holdout=10)
    kwargs = dict(labels=labels, folds=2, n_resamples=200, shots=(2,), test=True)
    first = tune(judge, items=items, out=tmp_path / "a", provider=scripted(0.6, 0.9), db=tmp_path / "one.db", **kwargs)
    assert first.holdout is not None and not first.holdout.forced
    assert first.holdout.n_items == 10 and first.holdout.agreement["n"] == 20
    from juge.errors import InputError

    with pytest.raises(InputError):  # another store
        tune(judge, items=items, out=tmp_path / "b", provider=scripted(0.6, 0.9), db=tmp_path / "two.db", **kwargs)
    renamed = tmp_path / "renamed.jsonl"
    rows = [json.loads(line) for line in items.read_text().splitlines()]
    renamed.write_text("".join(json.dumps(r | {"id": "x-" + r["id"], "group": "g-" + r["group"]}) + "\n" for r in rows))
    relabelled = tmp_path / "relabelled.jsonl"
    relabelled.write_text("".join(
        json.dumps(x | {"item_id": "x-" + x["item_id"]}) + "\n" for x in map(json.loads, labels.read_text().splitlines())
    ))  # fmt: skip
    with pytest.raises(InputError):  # a renamed copy
        tune(judge, items=renamed, out=tmp_path / "c", provider=scripted(0.6, 0.9), db=tmp_path / "three.db",
             **(kwargs | {"labels": relabelled}))  # fmt: skip
    assert not (tmp_path / "b").exists() and not (tmp_path / "c").exists()
    forced = tune(judge, items=items, out=tmp_path / "d", provider=scripted(0.6, 0.9), db=tmp_path / "two.db",
                  force=True, **kwargs)  # fmt: skip
    assert forced.holdout is not None and forced.holdout.forced
    assert "FORCED" in (tmp_path / "d" / "TUNING.md").read_text()


@pytest.mark.parametrize("setup,label,extra", [("passfail", "FAIL", ""), ("pairwise", "tie", "")])
def test_few_shot_examples_parse_for_constrained_judges(tmp_path, setup, label, extra):
    from juge.data.records import Case
    from juge.tune.variants import LabelledItem, base_spec, build, generate

    path = tmp_path / "j.toml"
    path.write_text(f'name = "j"\nsetup = "{setup}"\nconstrained = true\ndescription = "Good."\n{extra}')
    spec, judge = base_spec(path)
    pair = setup == "pairwise"
    items = [
        LabelledItem(Case(id=f"i{k}", question="Q?", **({"output_1": "a", "output_2": "b"} if pair else {"output": "a"})),
                     (label, label), None)
        for k in range(3)
    ]  # fmt: skip
    fewshot = next(v for v in generate(spec, judge, has_reference=False, threshold=None) if v.name == "fewshot-2")
    built = build(fewshot.make(items), "j.fewshot-2", tmp_path, "test")
    assert [ex.judgment for ex in built.rubric.examples] == ["C" if pair else "FAIL"] * 2


def test_tune_measures_nothing_when_every_call_fails_and_says_why(tmp_path, monkeypatch):
    from juge.cli import main

    judge, items, labels = write_data(tmp_path, n_groups=8, holdout=0)
    judge.write_text(JUDGE.replace('provider = "scripted"\n', "") + '[provider]\nname = "scripted"\n')
    monkeypatch.setattr("sys.argv", ["juge", "tune", "--judge", str(judge), "--items", str(items), "--labels",
                                     str(labels), "--out", str(tmp_path / "tuned"), "--db", str(tmp_path / "j.db"),
                                     "--folds", "2", "--shots", "2", "--no-progress"])  # fmt: skip
    with pytest.raises(SystemExit) as exit_info:
        main()
    assert exit_info.value.code == 3
    assert not (tmp_path / "tuned").exists()


def test_cli_tune_table_fits_80_columns_and_cuts_no_name(tmp_path):
    from typer.testing import CliRunner

    from juge.cli import app

    judge, items, labels = write_data(tmp_path, n_groups=16, holdout=0)
    judge.write_text(CLI_JUDGE)
    long = "strict-rubric-with-worked-examples-and-the-reference-answer"
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / f"{long}.toml").write_text(CLI_JUDGE)
    out = tmp_path / "tuned"
    args = ["tune", "--judge", str(judge), "--items", str(items), "--labels", str(labels), "--out", str(out),
            "--variants", str(tmp_path / "variants"), "--candidates", f"as-given,verdict-only,file:{long}",
            "--folds", "2", "--shots", "2", "--resamples", "200", "--no-progress", "--db", str(tmp_path / "j.db")]  # fmt: skip
    res = CliRunner().invoke(app, args, env={"COLUMNS": "80"})
    assert res.exit_code == 0, res.output
    names = [c["name"] for c in json.loads((out / "tuning.json").read_text())["candidates"]]
    assert sorted(names) == sorted(["as-given", "verdict-only", f"file:{long}"])
    lines = res.output.splitlines()
    assert max(len(line) for line in lines) <= 80, res.output
    # Each name is whole on one line (a column folded to fit would split it), and so is each interval.
    for name in names:
        assert any(name in line for line in lines), (name, res.output)
    assert res.output.count("1.000 [1.000, 1.000] n=32") >= len(names), res.output


def write_passfail_task(tmp_path, n=40, fails=6):
    """A 40-case PASS/FAIL task: `fails` cases two raters both call FAIL, the rest PASS."""
    items, labels = [], []
    for i in range(n):
        truth = "FAIL" if i < fails else "PASS"
        items.append({"id": f"c{i}", "group": f"q{i}", "split": "dev", "question": f"Q{i}?",
                      "output": f"Answer {i}. CASE:{i:02d}"})  # fmt: skip
        labels += [{"item_id": f"c{i}", "rater_id": r, "label": truth} for r in ("ann", "bob")]
    (tmp_path / "items.jsonl").write_text("".join(json.dumps(x) + "\n" for x in items))
    (tmp_path / "labels.jsonl").write_text("".join(json.dumps(x) + "\n" for x in labels))
    (tmp_path / "judge.toml").write_text(JUDGE)
    return tmp_path / "judge.toml", tmp_path / "items.jsonl", tmp_path / "labels.jsonl"


def lazy_or_careful(fails=6, flagged=8) -> ScriptedProvider:
    """The judge as given says PASS to every case but the first; with worked examples it catches every
    failure and flags `flagged` good answers too."""

    def answer(request: Request) -> Response:
        system, user = request.messages[0]["content"], request.messages[-1]["content"]
        case = int(user.split("CASE:")[1][:2])
        if "Worked examples" in system:
            verdict = "FAIL" if case < fails + flagged else "PASS"
        else:
            verdict = "FAIL" if case == 0 else "PASS"
        return Response(text=f"{verdict}\nBecause.", model="m1", tokens_in=10, tokens_out=2)

    return ScriptedProvider(fn=answer)


def test_tune_ranks_passfail_by_kappa_and_never_picks_the_judge_that_says_pass(tmp_path):
    """Issue 23 item 5: on raw agreement the judge as given (PASS on 39 of 40) wins, 0.875 to 0.800."""
    judge, items, labels = write_passfail_task(tmp_path)
    result = tune(judge, items=items, labels=labels, out=tmp_path / "tuned", provider=lazy_or_careful(),
                  db=tmp_path / "j.db", folds=4, n_resamples=300, shots=(2,), candidates=("as-given", "fewshot-2"))  # fmt: skip
    saved = json.loads((tmp_path / "tuned" / "tuning.json").read_text())
    by_name = {c["name"]: c for c in saved["candidates"]}
    lazy, careful = by_name["as-given"], by_name["fewshot-2"]
    assert lazy["agreement"]["value"] == pytest.approx(0.875)
    assert careful["agreement"]["value"] == pytest.approx(0.800)
    assert saved["chosen"] == result.chosen == "fewshot-2" and saved["measure"] == "kappa"
    assert lazy["kappa"]["value"] == pytest.approx(0.254, abs=1e-3)
    assert careful["kappa"]["value"] == pytest.approx(0.494, abs=1e-3)
    assert (lazy["failures_caught"]["k"], lazy["failures_caught"]["n"]) == (2, 12)
    assert careful["failures_caught"]["k"] == 12 and careful["false_flags"]["k"] == 16
    assert lazy["catches_enough"] is False and careful["catches_enough"] is True
    assert saved["failures_bar"] == 1.0
    # beside the candidates: person vs person and a judge that says PASS to everything
    assert saved["ceiling"]["name"] == "person vs person" and saved["ceiling"]["kappa"]["value"] == 1.0
    (always,) = saved["baselines"]
    assert always["name"] == "always PASS" and always["kappa"]["value"] == 0.0
    assert always["agreement"]["value"] == pytest.approx(34 / 40) and always["failures_caught"]["k"] == 0
    # the figures quoted are kappas; TUNING.md shows kappa for every candidate
    assert saved["in_sample"] == careful["kappa"]
    markdown = (tmp_path / "tuned" / "TUNING.md").read_text()
    assert "| figure | kappa |" in markdown and "always PASS" in markdown and "person vs person" in markdown
    # the tuning run is marked as one: left out of `juge runs` unless --all, and without a pass rate
    import juge as api

    assert api.list_runs(db=tmp_path / "j.db") == []
    (row,) = api.list_runs(db=tmp_path / "j.db", all_kinds=True)
    assert (row.kind, row.run_id, row.pass_rate, row.cases_passed) == ("tune", result.run_id, None, None)


def test_tune_never_chooses_an_always_pass_candidate_when_the_labels_hold_failures(tmp_path):
    judge, items, labels = write_passfail_task(tmp_path)
    (tmp_path / "variants").mkdir()
    (tmp_path / "variants" / "yes-man.toml").write_text(JUDGE.replace("solves", "SAYPASS solves"))

    def answer(request: Request) -> Response:
        prompt = " ".join(m["content"] for m in request.messages)
        case = int(prompt.split("CASE:")[1][:2])
        if "SAYPASS" in prompt:
            return Response(text="PASS\nFine.", model="m1", tokens_in=1, tokens_out=1)
        # the other candidate is poor: one failure caught, 8 good answers flagged (kappa below 0)
        verdict = "FAIL" if case in (0, 20, 21, 22, 23, 24, 25, 26) else "PASS"
        return Response(text=f"{verdict}\nBecause.", model="m1", tokens_in=100, tokens_out=50)

    result = tune(judge, items=items, labels=labels, out=tmp_path / "tuned", provider=ScriptedProvider(fn=answer),
                  db=tmp_path / "j.db", folds=4, n_resamples=300, shots=(), variants=tmp_path / "variants",
                  candidates=("as-given", "file:yes-man"))  # fmt: skip
    by_name = {c.name: c for c in result.candidates}
    assert by_name["file:yes-man"].kappa["value"] == 0.0
    assert by_name["as-given"].kappa["value"] < 0
    assert by_name["file:yes-man"].cost_per_item < by_name["as-given"].cost_per_item
    assert result.chosen == "as-given"
