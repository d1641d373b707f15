"""`juge policy derive|test`, `juge route`, `juge audit-sample`, `juge compare`, `juge estimate`."""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from enum import StrEnum
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table
from rich.text import Text

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.endpoint import ApiKeyEnvOption, BaseUrlOption, ModelOption
from juge.commands.inputs import ESTIMATE_OPTIONS, ITEM_OPTIONS, STUDY_OPTIONS, reads_inputs, with_files
from juge.commands.label import DbUrl as LabelDbUrl
from juge.errors import InputError
from juge.files import staged_output, write_atomic
from juge.reports.fit import fitted, wrapped
from juge.store import DEFAULT_DB
from juge.visible import terminal_safe

if TYPE_CHECKING:
    from juge.policy.results import RoutedItem

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

JsonOption = Annotated[Path | None, typer.Option("--json", help="Also write the numbers as JSON to this file.")]
JunitOption = Annotated[
    Path | None,
    typer.Option(
        "--junit", help="Also write JUnit XML for CI: a test case per category and one for the policy as a whole."
    ),
]
SeedOption = Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")]
# Cost is part of a cascade's decision: the same two options on policy derive and policy test.
PricesOption = Annotated[
    Path | None,
    typer.Option(
        "--prices",
        help="A cascade's prices: a TOML file with a [prices] table (an eval file will do), US$ per million "
        'tokens by model name prefix, e.g. "gpt-6-luna" = { input = 0.15, output = 0.6 }. A model without a '
        "price leaves a configuration's US$ cost empty (with a warning; tokens per item are always given). "
        "policy test: default the prices given at derive.",
    ),
]
MinutesPerLabelOption = Annotated[
    float | None,
    typer.Option(
        "--minutes-per-label",
        min=0,
        help="A cascade's person-minutes per label, for the minutes each configuration saves (default 1.0; "
        "policy test: the policy's).",
    ),
]


class StrataChoice(StrEnum):
    category = "category"


ResamplesOption = Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")]
AgainstOption = Annotated[
    Path | None,
    typer.Option(
        "--against",
        help="A policy or calibration JSON: refuse (exit 2) when the run's judge is not the one it measured "
        "(model version as answered, template hash: it has EXPIRED), unless --force.",
    ),
]
ForceAgainstOption = Annotated[
    bool,
    typer.Option("--force", help="With --against: use the expired measurement anyway (recorded, shown as FORCED)."),
]


@contextmanager
def staged_json(path: Path | None) -> Iterator[Callable[[dict[str, Any]], None] | None]:
    """A temporary file next to ``path``, made now (so an unwritable path fails first); yields a function that
    writes the JSON into it, and renames it to ``path`` when the block ends without error (else removes it)."""
    with staged_output(path, "--json") as tmp:
        if tmp is None:
            yield None
            return

        def write(data: dict[str, Any]) -> None:
            with open(tmp, "w", encoding="utf-8") as f:
                f.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
                f.flush()
                os.fsync(f.fileno())

        yield write


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    if path is not None:
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        out.print(Text(f"wrote {path}"))


def _clip(text: str | None, limit: int = 400) -> str:
    if text is None:
        return "(none)"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters in --json)"


# ---- estimate ------------------------------------------------------------------------------
@reads_inputs(*ESTIMATE_OPTIONS)
def estimate_command(
    run: Annotated[str, typer.Option("--run", help="Run id (or an unambiguous prefix) in the store.")],
    labels: Annotated[
        Path,
        typer.Option(
            "--labels", help="Human labels (JSONL/CSV: item_id, rater_id, label) on a random subset of the run's cases."
        ),
    ],
    db: DbOption = str(DEFAULT_DB),
    threshold: Annotated[
        float | None, typer.Option(help="For score judges: a case passes when its score is >= this.")
    ] = None,
    label_threshold: Annotated[
        float | None, typer.Option(help="For score labels: a person says PASS when the score is >= this.")
    ] = None,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    against: AgainstOption = None,
    force: ForceAgainstOption = False,
    strata: Annotated[
        StrataChoice | None,
        typer.Option(
            "--strata",
            help="Add stratified PPI++: PPI++ within each category of the run's cases, combined by their shares "
            "(narrower when the judge's accuracy differs by category).",
        ),
    ] = None,
    selection: Annotated[
        Path | None,
        typer.Option(
            "--selection",
            help="The --json of `juge label init --select ... --budget N` that drew the labelled items: labels drawn "
            "by category are estimated by category (stratified PPI++ is then the figure to report), labels drawn "
            "decisively (each with its own chance) are weighted by 1 / chance in every corrected figure.",
        ),
    ] = None,
    source: StudySource = StudySource(),
) -> None:
    """Corrected pass rate of a run: the judge's rate corrected by human labels on a random subset.

    Prints the judge-only rate, the human-only rate, the PPI++ estimate (prediction-powered
    inference with a power-tuned weight, CLT interval) and the sensitivity/specificity
    plug-in (Rogan-Gladen, bootstrap interval), and which one to report and why. A case
    passes when all its checks pass and every PASS/FAIL judge says PASS; a missing verdict
    counts as a fail in the corrections (fail closed) and is counted on its own line.
    The labelled cases must be a random sample of the run's cases. With --against, a run whose
    judge is not the one a policy or calibration measured is refused (exit 2) unless --force (FORCED).
    With --strata, the labels must be a random sample of each category's cases. With --selection, the
    labels are weighted as their draw requires (by category: stratified PPI++; decisive: 1 / each one's chance).
    """
    from juge.api import estimate
    from juge.stats.estimate import format_estimate as fmt

    result = estimate(
        run,
        labels,
        source=source,
        db=db,
        threshold=threshold,
        label_threshold=label_threshold,
        confidence=confidence,
        resamples=resamples,
        seed=seed,
        against=against,
        force=force,
        strata=None if strata is None else "category",
        selection=selection,
    )
    for warning in result.warnings:
        err.print(Text("warning: " + warning, style="bold yellow"), soft_wrap=True)
    table = Table(
        title=Text(f"Pass rate of run {result.run_id} ({result.n_cases} cases, {result.n_labelled} labelled)"),
        title_justify="left",
    )
    table.add_column("estimate")
    table.add_column(f"value [{confidence:.0%} interval] n", justify="right")
    table.add_column("what it rests on")
    table.add_row("judge only", fmt(result.judge_only), "the judge's verdicts; biased by its errors")
    weighted = " (each weighted by 1 / its chance)" if result.weighting == "inverse-probability" else ""
    table.add_row("human only", fmt(result.human_only), f"the labelled cases alone{weighted}")
    mark = {result.recommended: " (recommended)"}
    table.add_row(
        f"PPI++{mark.get('ppi++', '')}",
        fmt(result.ppi),
        f"labels{weighted} + judge, lambda = {result.ppi.lambda_:.2f}",
    )
    rg = result.rogan_gladen
    sens_spec = ", ".join(
        f"{name} {value:.3f}"
        for name, value in (("sens", rg.sensitivity), ("spec", rg.specificity))
        if value is not None
    )
    if rg.why_not:
        sens_spec += ("; " if sens_spec else "") + rg.why_not
    table.add_row("sens/spec plug-in", fmt(rg), sens_spec)
    if result.stratified is not None:
        strat = result.stratified
        table.add_row(
            f"stratified PPI++ (by {strat.by}){mark.get('stratified', '')}",
            fmt(strat),
            f"PPI++ within {len(strat.strata)} strata, weighted by their shares of the cases",
        )
        for s in strat.strata:
            table.add_row(
                Text(f"  {s.stratum}"),
                fmt(s),
                f"{s.n_labelled} labelled, weight {s.weight:.2f}, lambda = {s.lambda_:.2f}",
            )
    out.print(fitted(table, out))
    # A count, not an estimate: under the table, so it never reads as "value [95% interval] n: 1".
    out.print(
        Text(
            f"missing verdict: {result.n_missing_verdict} of {result.n_cases} cases "
            "(unparsed, refused or error: never a pass)"
        )
    )
    out.print(Text(f"Why {'stratified PPI++' if result.recommended == 'stratified' else 'PPI++'}: " + result.why))
    for note in result.notes:
        out.print(Text("note: " + note, style="yellow"))
    write_json(json_path, result.to_dict())


# ---- compare -------------------------------------------------------------------------------
def compare_command(
    run_a: Annotated[str, typer.Argument(help="The old run (id or unambiguous prefix).")],
    run_b: Annotated[str, typer.Argument(help="The new run, on the same cases.")],
    db: DbOption = str(DEFAULT_DB),
    threshold: Annotated[
        float | None, typer.Option(help="For score judges: a case passes when its score is >= this.")
    ] = None,
    allow_different_judges: Annotated[
        bool,
        typer.Option(
            "--allow-different-judges",
            help="Compare even when the judge versions or rubrics differ (flagged as NOT COMPARABLE).",
        ),
    ] = False,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    against: AgainstOption = None,
    force: ForceAgainstOption = False,
) -> None:
    """Compare two runs of the same cases and show only what changed.

    A case passes when all its checks pass and every PASS/FAIL judge says PASS (score
    judges: score >= --threshold); a refused/unparsed/error judgment makes the case
    missing, never a pass. Reports pass->fail and fail->pass transitions, the paired
    difference of pass rates (new - old) with a paired bootstrap interval, the exact
    McNemar p-value, and every changed case with both raw outputs. Refuses (exit 2) when
    the runs used different judge models, templates or template hashes, and with --against
    when their judge is not the one a policy or calibration measured (unless --force: FORCED).
    """
    from juge.api import compare
    from juge.stats.estimate import format_estimate as fmt

    result = compare(
        run_a,
        run_b,
        db=db,
        threshold=threshold,
        allow_different_judges=allow_different_judges,
        resamples=resamples,
        seed=seed,
        against=against,
        force=force,
    ).to_dict()
    for warning in result["warnings"]:  # once, with the figures it qualifies (and in --json)
        out.print(Text("WARNING: " + warning, style="bold red"))
    a, b = result["run_a"], result["run_b"]
    t = result["transitions"]
    table = Table(
        title=Text(f"{a['id']} (old) -> {b['id']} (new): {result['n_paired']} cases with a verdict in both"),
        title_justify="left",
    )
    table.add_column("figure")
    table.add_column("value", justify="right")
    table.add_row("pass rate, old", fmt(result["pass_rate_a"]))
    table.add_row("pass rate, new", fmt(result["pass_rate_b"]))
    table.add_row("difference new - old (paired)", fmt(result["difference_b_minus_a"]))
    table.add_row("pass→fail", str(t["pass_to_fail"]))
    table.add_row("fail→pass", str(t["fail_to_pass"]))
    table.add_row("exact McNemar p", f"{result['mcnemar_p']:.4g}")
    table.add_section()
    table.add_row("missing verdict (either run)", str(result["n_missing_verdict"]))
    table.add_row("inputs differ (left out)", str(result["n_inputs_differ"]))
    table.add_row("only in old / only in new", f"{result['n_only_in_a']} / {result['n_only_in_b']}")
    out.print(fitted(table, out))
    for d in result["judge_diffs"]:
        a_v, b_v = d["a"], d["b"]
        out.print(Text(f"\njudge {d['judge']} changed:", style="bold"))
        if a_v["model"] != b_v["model"]:
            out.print(Text(f"  model: {a_v['model']} -> {b_v['model']}"))
        if d["prompt_diff"]:
            order = f", order {d['order']}" if d["order"] else ""
            out.print(Text(f"  its prompt for case {d['item_id']}{order}, old -> new:"))
            for line in d["prompt_diff"]:
                style = "green" if line.startswith("+") else "red" if line.startswith("-") else "dim"
                out.print(Text("    " + terminal_safe(line), style=style), soft_wrap=True)
        elif a_v["template_hash"] != b_v["template_hash"]:
            out.print(
                Text(
                    "  template hash differs; neither run, nor the run that paid for its cached answers, logged a"
                    " call of it on a shared case to diff"
                )
            )
    if not result["changed"]:
        out.print("No case changed verdict.")
    for case in result["changed"]:
        arrow = case["transition"].replace("->", "→")
        out.print(Text(f"\n{case['item_id']}: {arrow}", style="bold"))
        out.print(Text("question: " + _clip(case["question"], 200)))
        if case["same_outputs"]:  # only the judge changed: the output once
            for slot, text in case["a"]["outputs"].items():
                out.print(Text(f"  {slot} (same in both runs): ", style="cyan") + Text(_clip(text)))
        for side, label in (("a", "old"), ("b", "new")):
            if not case["same_outputs"]:
                for slot, text in case[side]["outputs"].items():
                    out.print(Text(f"  {label} {slot}: ", style="cyan") + Text(_clip(text)))
            for reason in case[side]["reasons"]:
                out.print(Text(f"  {label} why: {reason}"))
    write_json(json_path, result)


# ---- policy derive / test, route, audit-sample ------------------------------------------------
ItemsOption = Annotated[
    Path | None,
    typer.Option(
        "--items",
        help="The items: pairs (the shared sample's items.jsonl layout, votes inside) or, for a PASS/FAIL or score "
        "judge, single answers (output). Default with --run: the run's cases.",
    ),
]
JudgmentsOption = Annotated[
    list[Path] | None,
    typer.Option(
        "--judgments",
        help="Recorded judge calls (JSONL: item_id, judge, model, prompt, order, letter, outcome, text); repeatable.",
    ),
]
RunOption = Annotated[
    str | None, typer.Option("--run", help="Take judgments (and, without --items, cases) from this stored run.")
]
LabelsOption = Annotated[
    Path | None,
    typer.Option(
        "--labels",
        help="Human votes in a separate file (item_id, rater_id, label: A/B/tie for pairs, PASS/FAIL or a score for "
        "one answer, which sets the study's kind); they replace the votes the items carry.",
    ),
]
PolicyOption = Annotated[Path, typer.Option("--policy", help="Policy JSON written by juge policy derive --json.")]
ForceUseOption = Annotated[
    bool,
    typer.Option(
        "--force",
        help="Use a policy that did not hold on its holdout test (NOT HELD) or has expired (its judge's model "
        "version, template or rubric changed) anyway; recorded in the output (and the policy file for NOT HELD), "
        "and shown as FORCED.",
    ),
]


@reads_inputs(*STUDY_OPTIONS)
def derive_command(
    items: ItemsOption = None,
    judgments: JudgmentsOption = None,
    run: RunOption = None,
    labels: LabelsOption = None,
    db: DbOption = str(DEFAULT_DB),
    split: Annotated[
        str, typer.Option(help="The split the policy is derived on. Not holdout: it is kept for the one `policy test`.")
    ] = "dev",
    force_split: Annotated[
        bool,
        typer.Option(
            "--force-split", help="Derive on --split holdout anyway; the policy must then be tested on another split."
        ),
    ] = False,
    margin: Annotated[
        float, typer.Option(help="How far judge-vs-person agreement may fall below person-vs-person.")
    ] = 0.05,
    rule: Annotated[
        str,
        typer.Option(help="margin (default), lower-bound (stricter, pairwise), or guarantee (route by confidence)."),
    ] = "margin",
    target: Annotated[
        float,
        typer.Option(
            help="--rule guarantee and --cascade: required agreement with the majority on judged items (scores: "
            "on pass/fail at the threshold)."
        ),
    ] = 0.9,
    confidence: Annotated[
        float, typer.Option(help="--rule guarantee and --cascade: confidence level of the guarantee.")
    ] = 0.9,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge",
            help="Candidate judge (name or judge/template); repeatable. Default: every judge in the judgments.",
        ),
    ] = None,
    min_recall: Annotated[
        float | None,
        typer.Option(
            "--min-recall",
            help="PASS/FAIL judges: the judge decides a category alone only if it catches at least this share of "
            "human FAILs (on top of catching as many as one person catches of another's).",
        ),
    ] = None,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Score judges: a case passes at this score or above. Default: chosen on dev from the labels "
            "(the point at which people agree most on pass/fail) and written into the policy."
        ),
    ] = None,
    audit_n: Annotated[int, typer.Option("--audit-n", min=1, help="Decisions a person reads each week (rule 5).")] = 10,
    cascade: Annotated[
        str | None,
        typer.Option(
            help="Judge names, cheapest first (e.g. chat-small,chat-strong): each stage decides the items it may "
            "(category rule, then a confidence threshold keeping agreement with the majority at --target with "
            "probability --confidence), the rest go to the next stage, then to a person. Pairwise, PASS/FAIL and "
            "score judges (confidence: docs/calibration.md). Pairwise: each judge alone, each prefix and the "
            "cascade are measured on dev (coverage, agreement, cost per item, person-minutes saved) and the "
            "cheapest within noise of the best is recorded as the choice.",
        ),
    ] = None,
    prices: PricesOption = None,
    minutes_per_label: MinutesPerLabelOption = None,
    minute_price: Annotated[
        float | None,
        typer.Option(
            "--minute-price",
            min=0,
            help="With --cascade: US$ one person-minute costs. The choice then ranks each configuration by its calls "
            "plus its people's minutes (items left to a person x --minutes-per-label); default: by its calls alone.",
        ),
    ] = None,
    choose: Annotated[
        bool,
        typer.Option(
            "--choose",
            help="With --cascade: route with the configuration chosen on dev (the cheapest within noise of the best "
            "that meets the guarantee) instead of the cascade as given: derived again on the same dev data with its "
            "stages; every configuration and the choice stay in the policy, and policy test measures them all.",
        ),
    ] = False,
    output: Annotated[Path, typer.Option("-o", "--output", help="The policy for people (Markdown).")] = Path(
        "JUDGE_POLICY.md"
    ),
    json_path: Annotated[
        Path, typer.Option("--json", help="The policy for juge (JSON), read by policy test, route and audit-sample.")
    ] = Path("policy.json"),
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    source: StudySource = StudySource(),
) -> None:
    """Derive a judge policy on the dev split: which judge, which prompt per category, what goes to a person.

    Rules: (1) the judge with the highest agreement with the human majority; (2) the
    reference prompt where it agrees at least as often; (3) a category goes to a person
    when judge-vs-person agreement falls below person-vs-person by more than --margin
    (figures rounded to 3 decimals; --rule lower-bound: unless the interval's lower bound
    is above -margin); (4) order-dependent, refused, unparsed or missing verdicts go to a
    person; (5) a weekly audit sample; (6) --rule guarantee: route by confidence with a
    stated guarantee. Writes JUDGE_POLICY.md for people and policy.json for juge.
    """
    import juge.policy
    from juge.policy.configurations import routing_hint
    from juge.policy.derivation import policy_markdown
    from juge.reports.policy_tables import print_input_notes, print_policy

    with staged_output(output, "-o") as md_tmp, staged_json(json_path) as write:  # both fail before the study
        result = juge.policy.derive(
            source=with_files(source, items=items, judgments=judgments, run=run, labels=labels, db=db),
            split=split,
            force_split=force_split,
            margin=margin,
            rule=rule,
            target=target,
            confidence=confidence,
            min_recall=min_recall,
            threshold=threshold,
            judges=judge,
            audit_n=audit_n,
            resamples=resamples,
            seed=seed,
            cascade=cascade,
            prices=prices,
            minutes_per_label=minutes_per_label,
            minute_price=minute_price,
            choose=choose,
        )
        assert md_tmp is not None and write is not None
        md_tmp.write_text(policy_markdown(result), encoding="utf-8")
        write(result.to_dict())
    print_input_notes(result, err)
    print_policy(result, out, err)
    out.print(Text(f"wrote {output}"))
    out.print(Text(f"wrote {json_path}"))
    if split == "holdout":
        out.print(
            Text(
                f"next: juge policy test --policy {json_path} --split NAME with a split other than holdout "
                "(this policy was derived on the holdout)",
                style="yellow",
            )
        )
    else:
        out.print(
            wrapped(
                f"next: juge policy test --policy {json_path} with the same inputs (once: it uses up the holdout split)",
                out,
            )
        )
    choice = result.cascade.choice if result.cascade is not None else None
    if choice is not None and choice.chosen is not None and not choice.routes_with_choice:
        out.print(wrapped(f"to route with the chosen configuration ({choice.chosen}): {routing_hint(choice)}", out))


@reads_inputs(*STUDY_OPTIONS)
def test_command(
    policy_path: PolicyOption,
    items: ItemsOption = None,
    judgments: JudgmentsOption = None,
    run: RunOption = None,
    labels: LabelsOption = None,
    db: DbOption = str(DEFAULT_DB),
    split: Annotated[str, typer.Option(help="The held-out split.")] = "holdout",
    force: Annotated[
        bool, typer.Option("--force", help="Test a holdout that was already used (the result is flagged).")
    ] = False,
    json_path: JsonOption = None,
    junit: JunitOption = None,
    no_fail: Annotated[
        bool, typer.Option("--no-fail", help="Exit 0 when the policy did NOT HOLD (only the report is wanted).")
    ] = False,
    prices: PricesOption = None,
    minutes_per_label: MinutesPerLabelOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    source: StudySource = StudySource(),
) -> None:
    """Test a policy once on the holdout split; record the test in the store, this machine's registry and the
    policy file.

    Reports the decisions, the share the judge decides alone, and on those items:
    agreement and kappa with the majority, judge vs each person and person vs person;
    the judge on every holdout item with no policy; per category, and whether the policy
    HELD on holdout (the dev decision stands) or NOT (a gap now beyond the margin). The
    policy's status (held, not held) is written into the policy file; route and
    audit-sample refuse a policy that did not hold unless --force. Exit 1 when NOT HELD
    (a check you asked for failed; --no-fail: exit 0). A test that shares any item (by
    content: question and answers), id or group with an earlier test, from any store or
    directory, with any policy, is refused (exit 2) unless --force, which is recorded and
    shown as FORCED.
    """
    import juge.policy
    from juge.policy.junit import policy_test_junit
    from juge.reports.policy_tables import print_input_notes, print_test

    with staged_output(junit, "--junit") as junit_tmp:
        test = juge.policy.test(
            policy_path,
            source=with_files(source, items=items, judgments=judgments, run=run, labels=labels, db=db),
            db=db,
            split=split,
            force=force,
            json_path=json_path,
            resamples=resamples,
            seed=seed,
            prices=prices,
            minutes_per_label=minutes_per_label,
        )
        if junit_tmp is not None:
            junit_tmp.write_text(policy_test_junit(test), encoding="utf-8")
    print_input_notes(test, err)
    print_test(test, out)
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))
    out.print(Text(f"recorded in {policy_path} (holdout_tests), the store and this machine's holdout registry"))
    if test.held is False:
        out.print(
            wrapped(
                f"status: not held (in {policy_path}): juge route and juge audit-sample refuse this policy unless "
                "--force, recorded",
                out,
            )
        )
    if test.held is False and not no_fail:
        raise typer.Exit(1)


@reads_inputs(*ITEM_OPTIONS)
def route_command(
    policy_path: PolicyOption,
    item: Annotated[
        Path | None,
        typer.Option(
            "--item",
            help='One new item as a JSON object; without --eval its judge calls come under "judgments" '
            "(or from --judgments).",
        ),
    ] = None,
    items: Annotated[
        Path | None,
        typer.Option("--items", help="New items (JSONL/CSV, read with the eval file's mapping); needs --eval."),
    ] = None,
    eval_file: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            help="Eval file whose judge the policy names: call it live (engine, cache, retries, store) on the items.",
        ),
    ] = None,
    judgments: Annotated[
        Path | None, typer.Option("--judgments", help="The item's recorded judge calls in a separate JSONL file.")
    ] = None,
    output: Annotated[
        Path | None, typer.Option("-o", "--output", help="With --eval: write the decisions (JSONL) here, not stdout.")
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="With --eval: calls in flight at once.")] = None,
    provider: Annotated[
        str | None, typer.Option(help="With --eval: provider for the judge (openai, anthropic, ...), not the eval's.")
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    model: ModelOption = None,
    db: DbOption = str(DEFAULT_DB),
    json_path: JsonOption = None,
    force: ForceUseOption = False,
    source: StudySource = StudySource(),
) -> None:
    """Route new items: judge (its verdict stands) or person, with the reason.

    With --eval, the policy's judge is called live through the engine on --items (or one --item) and one
    decision per item is written as JSONL; the judge's model and template hash must be the ones the policy
    was derived with (else exit 2); --provider, --base-url, --api-key-env and --model override the eval
    file's endpoint. A cascade policy (policy derive --cascade) calls its first stage, then each next stage only
    on the items left to it (a stage that is a [[panels]] panel calls its members), each as many times as its dev
    confidence read; each decision names its stage. Without it, --item carries its recorded judge calls (or --judgments FILE does); an item
    without any goes to a person, and the output says so. Item-level reasons come first: the answers' order
    changed the verdict, or a judgment was refused, unparsed or missing; then the category (or, under
    --rule guarantee, the judge's confidence). A policy that did NOT HOLD on its holdout test is refused
    (exit 2, naming the test) unless --force (recorded, shown as FORCED); an untested one routes with a note.
    A policy whose judge changed (provider, model version as answered, template, rubric or parser: it has
    EXPIRED) is refused too, before the calls for the judge file and after them for the model that answered,
    unless --force (recorded in the output's "identity", shown as FORCED).
    """
    from juge.api import route

    if eval_file is None and output is not None:
        raise InputError("-o needs --eval: without it one item is routed and printed")
    with staged_output(output, "-o") as tmp, staged_json(json_path) as write:
        result = route(
            policy_path,
            item=item,
            items=items,
            judgments=judgments,
            eval_file=eval_file,
            db=db,
            concurrency=concurrency,
            provider=provider,
            base_url=base_url,
            api_key_env=api_key_env,
            model=model,
            force=force,
            mapping=source.mapping,
        )
        lines = "".join(json.dumps(d.to_dict(), ensure_ascii=False) + "\n" for d in result.decisions)
        if eval_file is not None and tmp is not None:
            tmp.write_text(lines, encoding="utf-8")
        if write is not None:
            write(result.to_dict())
    notes = Console(stderr=True, highlight=False) if eval_file is not None else out  # stdout may carry the JSONL
    if result.warning:
        notes.print(Text(result.warning, style="bold red"), soft_wrap=True)
    if eval_file is None:
        _print_decision(result.decisions[0])
    elif output is None:
        print(lines, end="")
    for note in result.notes:
        notes.print(Text("note: " + note, style="yellow"), soft_wrap=True)
    if eval_file is not None:
        n = len(result.decisions)
        err.print(
            Text(
                f"routed {n} items: {result.n_to_judge} to the judge, {n - result.n_to_judge} to a person; "
                f"{result.calls} calls, {result.cache_hits} cache hits, {result.retries} retries (run {result.run_id})"
            )
        )
    if json_path is not None:
        notes.print(Text(f"wrote {json_path}"))


def _print_decision(decision: RoutedItem) -> None:
    words = {"A": "answer 1 is better", "B": "answer 2 is better", "tie": "a tie", "inconsistent": "inconsistent"}
    if decision.passes is not None:
        words[decision.verdict or ""] = "passes" if decision.passes else "does not pass"
    out.print(Text(decision.decision, style="bold"))
    out.print(Text(f"reason: {decision.detail}"))
    verdict = decision.verdict
    out.print(
        Text(f"verdict: {verdict} ({words.get(verdict, '')})" if verdict else "verdict: none")
        + Text("" if decision.route == "judge" else " -- not to be used: a person decides")
    )


def audit_command(
    policy_path: PolicyOption,
    run: Annotated[str, typer.Option("--run", help="Run id in the store whose judge decisions are sampled.")],
    n: Annotated[int, typer.Option("-n", min=1, help="How many decisions to read.")] = 10,
    seed: Annotated[
        int | None, typer.Option(help="Sample seed. Default: the ISO year and week (a new sample each week).")
    ] = None,
    db: DbOption = str(DEFAULT_DB),
    json_path: JsonOption = None,
    force: ForceUseOption = False,
    label_project: Annotated[
        str | None,
        typer.Option(
            "--label-project",
            help="Also add the drawn items to this blind labelling project (created with --rubric if new; extended "
            "if it exists), for people to label in `juge label serve` without seeing the judge's verdict. "
            "`juge audit status` reads their labels back.",
        ),
    ] = None,
    rubric: Annotated[
        Path | None,
        typer.Option("--rubric", help="With a new --label-project: the rubric TOML or judge file people read."),
    ] = None,
    db_url: LabelDbUrl = None,
) -> None:
    """Draw N random decisions the judge made alone, with the item and the judge's raw text, for a person to read.

    Each draw is recorded in the policy file (its week, run, seed, items and verdicts), so `juge audit status`
    can read the audit back. With --label-project the items (never the verdicts) go to a blind labelling
    project. A policy that did NOT HOLD on its holdout test is refused (exit 2, naming the test) unless --force
    (recorded, shown as FORCED); so is a run whose judge is not the one the policy was derived with (model
    version as answered, template hash: the policy has EXPIRED; recorded in the output's "identity")."""
    from juge.api import audit_sample

    with staged_json(json_path) as write:
        result = audit_sample(
            policy_path, run, db=db, n=n, seed=seed, force=force, label_project=label_project, rubric=rubric,
            db_url=db_url,
        )  # fmt: skip
        if write is not None:
            write(result.to_dict())
    if result.warning:
        out.print(Text(result.warning, style="bold red"), soft_wrap=True)
    out.print(
        Text(
            f"{len(result.sample)} judge decisions from run {result.run_id} (seed {result.seed}); read each and note "
            "whether you agree.",
            style="bold",
        )
    )
    for k, s in enumerate(result.sample, 1):
        out.print(Text(f"\n[{k}] {s.item_id} ({s.category}): judge verdict {s.verdict}", style="bold"))
        out.print(Text("question: " + _clip(s.question)))
        if s.context is not None:
            out.print(Text("context: " + _clip(s.context)))
        if "answer" in s:
            out.print(Text("answer: " + _clip(s.answer)))
        else:
            out.print(Text("answer 1: " + _clip(s.answer_1)))
            out.print(Text("answer 2: " + _clip(s.answer_2)))
        for order, text in s.judge_texts.items():
            out.print(Text(("judge: " if order == "text" else f"judge, order {order}: ") + _clip(text)))
    if result.label_project is not None:
        out.print(
            Text(
                f"\n{result.label_items_added} items added to labelling project {result.label_project} (blind: no "
                "verdict); people label them in `juge label serve`, then run `juge audit status`.",
                style="bold",
            )
        )
    if result.recorded:
        out.print(Text(f"recorded in {policy_path} as the audit of {result.week}"))
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))


def audit_status_command(
    policy_path: Annotated[Path, typer.Argument(help="Policy JSON whose audits (juge audit-sample) are read.")],
    db: Annotated[
        str | None,
        typer.Option("--db", help="The label store the audits' labelling projects are in: a SQLite file (or a URL)."),
    ] = None,
    db_url: LabelDbUrl = None,
    alpha: Annotated[
        float, typer.Option("--alpha", min=0.0001, max=0.5, help="Chance of a false drift alarm over every look.")
    ] = 0.05,
    json_path: JsonOption = None,
    junit: JunitOption = None,
) -> None:
    """Read every weekly audit of a policy against the labels people gave: judge-vs-person agreement per week and
    so far, per category and overall, beside the bar the policy was derived against (person vs person less the
    margin).

    The drift test is anytime-valid (a betting e-process; docs/calibration.md), so reading it every week does
    not raise false alarms. Outcome: holding, too few labels yet (with the number of labelled items that would
    decide), or DRIFTED: exit 1."""
    from juge.api import audit_status
    from juge.policy.junit import audit_status_junit

    url = db_url if db is None else (db if "://" in db else f"sqlite:///{db}")
    with staged_json(json_path) as write, staged_output(junit, "--junit") as junit_tmp:
        result = audit_status(policy_path, db_url=url, alpha=alpha)
        if write is not None:
            write(result.to_dict())
        if junit_tmp is not None:
            junit_tmp.write_text(audit_status_junit(result), encoding="utf-8")
    print_audit_status(result)
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))
    if result.drifted:
        raise typer.Exit(1)


def _pct(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:.1f} %"


def print_audit_status(result: Any) -> None:
    """The audit in a table: one row per week (all categories), then one per category, then the outcome."""
    style = {"drifted": "bold red", "holding": "bold green"}.get(result.outcome, "bold")
    out.print(Text(f"audit of policy {result.policy_hash[:12]} (judge {result.judge}), alpha {result.alpha:g}"))
    table = Table(title="by week (all categories)", title_justify="left")
    for col in ("week", "items", "agreement that week", "so far [band]", "bar", "e-value"):
        table.add_column(col, justify="left" if col == "week" else "right")
    for w in result.overall.weeks:
        c = w.cumulative
        table.add_row(
            w.week, str(w.n_items), _pct(w.agreement), f"{_pct(c.value)} [{_pct(c.low)}, {_pct(c.high)}]",
            _pct(w.bar), f"{w.evidence:.2f}",
        )  # fmt: skip
    if result.overall.weeks:
        out.print(table)
    cats = Table(title="by category", title_justify="left")
    for col in ("category", "items", "labels", "agreement [band]", "person vs person", "margin", "bar", "outcome"):
        cats.add_column(col, justify="left" if col in ("category", "outcome") else "right")
    for name, g in {**result.categories, "all": result.overall}.items():
        a = g.agreement
        cats.add_row(
            Text(name), str(g.n_items), str(g.n_labels), f"{_pct(a.value)} [{_pct(a.low)}, {_pct(a.high)}]",
            _pct(g.ceiling), _pct(g.margin), _pct(g.bar), g.outcome,
        )  # fmt: skip
    out.print(cats)
    for batch in result.batches:
        where = batch.label_project or "no labelling project"
        out.print(
            Text(f"draw {batch.week} ({batch.drawn_at}), run {batch.run_id}: {batch.n_labelled} of {batch.n_items} "
                 f"items labelled in {where}")
        )  # fmt: skip
    for note in result.notes:
        out.print(Text("note: " + note))
    out.print(Text(f"{result.outcome.upper()}: {result.reason}", style=style), soft_wrap=True)


def status_command(
    policy_path: Annotated[Path, typer.Argument(help="Policy JSON written by juge policy derive --json.")],
    db: DbOption = str(DEFAULT_DB),
    run: Annotated[
        str | None,
        typer.Option(
            "--run",
            help="A stored run of the judge whose answered model version to check (default: the newest run in "
            "--db with calls of the policy's judge).",
        ),
    ] = None,
    eval_file: Annotated[
        Path | None,
        typer.Option(
            "--eval",
            help="Eval file whose judge you route with: its model, template and rubric are checked (no call is made).",
        ),
    ] = None,
    json_path: JsonOption = None,
) -> None:
    """Where a policy stands: derived on what, tested when and whether it held, its audits, its judge's identity,
    whether it has EXPIRED and why, and what to run next.

    A policy expires when its judge changes: the provider, the model version as answered, the template, the
    rubric or the parser. The judge is checked in --eval's judge file (before any call) and in the answers of a
    stored run (--run, else the newest run in --db with calls of the policy's judge); with neither, expiry is
    unchecked and said so. Always exit 0 when the status could be read: it is a report, not a gate.
    """
    from juge.api import policy_status

    with staged_json(json_path) as write:
        result = policy_status(policy_path, db=db, run=run, eval_file=eval_file)
        if write is not None:
            write(result.to_dict())
    _print_status(result)
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))


def _print_status(r: Any) -> None:
    out = Console(highlight=False)  # hashes and commands stay whole, to copy
    words = "EXPIRED" if r.status == "expired" else r.status.upper() if r.status != "untested" else "untested"
    out.print(Text(f"policy {r.policy_hash[:12]} ({r.judge_kind}, judge {r.judge}): {words}", style="bold"))
    dev = r.dev
    out.print(Text(f"derived   {r.created_at or 'date unknown'} on split {dev.split!r}, {dev.n_items} items, "
                   f"data hash {(dev.data_hash or '')[:12]}"))  # fmt: skip
    if r.test_id is None:
        out.print(Text("tested    never (no holdout test recorded)"))
    else:
        held = "HELD" if r.held else "NOT HELD"
        forced = ", FORCED (items tested before)" if r.test_forced else ""
        out.print(Text(f"tested    {r.tested_at} on split {r.test_split!r}, {r.test_items} items{forced}: {held}"))
        if r.forced_uses:
            out.print(Text(f"          used {r.forced_uses} time(s) since with --force (FORCED)", style="red"))
    audit = f"{len(r.audits)} batch(es)" + (f": {r.audit_outcome}" if r.audit_outcome else "")
    out.print(Text(f"audits    {audit} (policy: {r.audit_n} decisions every {r.audit_every})"))
    for key, ident in r.identity.items():
        out.print(Text(f"judge     {key}: model {', '.join(ident.models)}, template hash "
                       f"{', '.join(h[:12] for h in ident.template_hashes) or 'not recorded'}"))  # fmt: skip
    if r.expired is None:
        out.print(Text("expired   unchecked (nothing to check the judge against)", style="yellow"))
    elif r.expired:
        out.print(Text("expired   YES, against " + "; ".join(r.checked_against), style="bold red"))
        for why in r.why_expired:
            out.print(Text("          " + why, style="red"))
    else:
        out.print(Text("expired   no, against " + "; ".join(r.checked_against)))
    for note in r.notes:
        out.print(Text("note: " + note, style="yellow"))
    for step in r.next:
        out.print(Text("next: " + step))


# ---- plan ----------------------------------------------------------------------------------
@reads_inputs(*STUDY_OPTIONS)
def plan_command(
    items: ItemsOption = None,
    judgments: JudgmentsOption = None,
    run: RunOption = None,
    labels: LabelsOption = None,
    db: DbOption = str(DEFAULT_DB),
    split: Annotated[str, typer.Option(help="The split the policy study reads.")] = "dev",
    margin: Annotated[
        float, typer.Option(help="How far judge-vs-person agreement may fall below person-vs-person.")
    ] = 0.05,
    probability: Annotated[
        float, typer.Option(help="The share of simulated studies that must settle the decision (e.g. 0.8).")
    ] = 0.8,
    max_factor: Annotated[
        float,
        typer.Option("--max-factor", help="Search up to this many times the current items before saying 'not within'."),
    ] = 10.0,
    reps: Annotated[int, typer.Option(help="Simulated studies per size.")] = 400,
    judge: Annotated[
        list[str] | None,
        typer.Option("--judge", help="Candidate judge (name or judge/template); repeatable, as in policy derive."),
    ] = None,
    width: Annotated[
        float | None,
        typer.Option(
            help="Plan a corrected pass rate instead (with --run and pass/fail --labels, as estimate): the labels "
            "an interval this wide (high - low) needs under labels alone, PPI++ and stratified PPI++."
        ),
    ] = None,
    confidence: Annotated[
        float, typer.Option(min=0.5, max=0.999, help="--width: confidence level of the interval.")
    ] = 0.95,
    threshold: Annotated[
        float | None,
        typer.Option(
            help="Score judges: a case passes when its score is >= this (as in policy derive; chosen on dev when "
            "omitted; with --width, as in estimate)."
        ),
    ] = None,
    min_recall: Annotated[
        float | None,
        typer.Option(
            "--min-recall",
            help="PASS/FAIL studies: the judge must catch at least this share of failures (as in policy derive).",
        ),
    ] = None,
    label_threshold: Annotated[
        float | None, typer.Option(help="--width, score labels: a person says PASS when the score is >= this.")
    ] = None,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: Annotated[
        int, typer.Option("--resamples", min=100, help="Bootstrap resamples of the policy derived first.")
    ] = 500,
    source: StudySource = StudySource(),
) -> None:
    """How many more labels would settle each decision.

    From a policy study (the inputs of `policy derive`: pairwise, PASS/FAIL or scores): for each
    category and overall, how many dev items (each with as many raters as now) settle the rule in
    at least --probability of simulated studies (items drawn with replacement from those in hand,
    the rule re-run on each). Pairs: the interval of judge-vs-person minus person-vs-person
    agreement is clear of -margin. PASS/FAIL and scores: the rule of `policy derive` (agreement,
    kappa, failures caught; agreement at the threshold, weighted kappa) says the same with every
    judge figure at either end of its interval. "not within N" when even --max-factor times the
    items would not; "no number of labels would decide it" when the figure the decision turns on
    sits on its bar. With --width, from a run and pass/fail labels (the inputs of `estimate`): the
    labels an interval that wide needs under labels alone, PPI++ and stratified PPI++ by category,
    and whether the judge is good enough for PPI to help at all.
    """
    from juge.api import plan

    with staged_json(json_path) as write:
        result = plan(
            source=with_files(source, items=items, judgments=judgments, run=run, labels=labels, db=db),
            run=run if width is not None else None,
            db=db,
            split=split,
            margin=margin,
            probability=probability,
            max_factor=max_factor,
            reps=reps,
            judges=judge,
            width=width,
            confidence=confidence,
            threshold=threshold,
            label_threshold=label_threshold,
            min_recall=min_recall,
            resamples=resamples,
            seed=seed,
        )
        for warning in result.warnings:
            err.print(Text("warning: " + warning, style="bold yellow"), soft_wrap=True)
        if result.decisions:
            table = Table(
                title=Text(
                    f"Items that settle each decision in {result.probability:.0%} of {result.reps} simulated studies "
                    f"(judge {result.judge}, margin {result.margin:g}, {result.level:.0%} intervals)"
                ),
                title_justify="left",
            )
            columns = ("category", "items now", "decision now", "turns on", "settled now", "items needed", "more")
            for name in columns:
                table.add_column(name, justify="right" if name in columns[4:] or name == "items now" else "left")
            for d in result.decisions:
                table.add_row(
                    Text(d.category),
                    str(d.n_items),
                    d.ruling or "",
                    "" if d.distance is None else Text(f"{d.binding} {d.distance:+.3f}"),
                    f"{d.settled_now:.0%}",
                    f"not within {d.cap}" if d.n_needed is None else str(d.n_needed),
                    "" if d.n_more is None else str(d.n_more),
                )
            out.print(fitted(table, out))
            for d in result.decisions:
                out.print(Text(f"{d.category}: {d.note}"))
        if result.pass_rate is not None:
            r = result.pass_rate
            table = Table(
                title=Text(
                    f"Labels for a {r.confidence:.0%} interval of width {r.width:g} "
                    f"({r.n_cases} cases, {r.n_labelled} labelled now)"
                ),
                title_justify="left",
            )
            table.add_column("method")
            table.add_column("labels needed", justify="right")
            table.add_column("saving against labels alone", justify="right")
            for name, n, saving in (
                ("labels alone", r.labels_alone, None),
                ("PPI++", r.ppi, r.saving_ppi),
                ("stratified PPI++ (by category)", r.stratified, r.saving_stratified),
            ):
                table.add_row(
                    name,
                    f"not within {r.n_cases}" if n is None else str(n),
                    "" if saving is None else str(saving),
                )
            out.print(fitted(table, out))
            if r.allocation:
                out.print(Text("stratified allocation: " + ", ".join(f"{k} {v}" for k, v in r.allocation.items())))
            if r.ppi_variance_ratio is not None:
                rho = "n/a" if r.correlation is None else f"{r.correlation:.3f}"
                most = "" if r.most_saved is None else f"; at most {r.most_saved:.2f} times fewer labels"
                out.print(
                    Text(
                        f"PPI++ at {r.ratio_at} labels: variance {r.ppi_variance_ratio:.3f} of the labels' alone "
                        f"({'helps' if r.ppi_helps else 'does not help'}; correlation of person and judge {rho}{most})"
                    )
                )
        for note in result.notes:
            out.print(Text("note: " + note, style="yellow"))
        if write is not None:
            write(result.to_dict())
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))
    from juge.files import is_stdout
    from juge.policy.plan import OVERALL

    # Only when labels within reach settle something (n_more > 0): "not within" everywhere is no plan to follow.
    if any(d.category != OVERALL and not d.on_margin and (d.n_more or 0) > 0 for d in result.decisions):
        # The open categories are where labels settle something: label init --select decisive reads this plan.
        kept = json_path is not None and not is_stdout(json_path)
        out.print(
            Text(
                "next: label the open categories first: juge label init NAME --cases ITEMS --rubric RUBRIC "
                f"--select decisive --budget N --plan {json_path if kept else 'PLAN'} --json init.json"
                + ("" if kept else " (PLAN: this plan, kept with --json PLAN)")
            ),
            soft_wrap=True,
        )


policy_app = typer.Typer(
    help="Derive a judge policy on dev data, test it once on holdout data, and see where it stands.",
    no_args_is_help=True,
)
policy_app.command("derive")(derive_command)
policy_app.command("test")(test_command)
policy_app.command("status")(status_command)


def register(app: typer.Typer) -> None:
    app.add_typer(policy_app, name="policy")
    app.command("route")(route_command)
    app.command("audit-sample")(audit_command)
    audit_app = typer.Typer(help="Read the weekly audits of a policy back (juge audit-sample draws them).")
    audit_app.command("status")(audit_status_command)
    app.add_typer(audit_app, name="audit")
    app.command("compare")(compare_command)
    app.command("estimate")(estimate_command)
    app.command("plan")(plan_command)
