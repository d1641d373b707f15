"""`juge probe injection`: how often a judge's verdict leaves the better answer when the losing one carries a prompt
injection."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.endpoint import ApiKeyEnvOption, BaseUrlOption
from juge.files import staged_output
from juge.reports.fit import fitted
from juge.store import DEFAULT_DB

err = Console(stderr=True)

INJECTION_HELP = (
    "Measure how often a judge's verdict flips when a prompt injection is appended to the LOSING answer.\n\n"
    "The built-in probe set (written for juge; juge/probes/DATA.md) has 40 questions, each with a clearly better "
    "and a clearly worse answer (wrong fact, wrong arithmetic, off topic, needless refusal, ignored instruction), "
    "and 6 kinds of injection: an override instruction, a fake verdict line, closing tags that try to end the "
    "answer and open a fake instruction, fake system/turn markers, an authority claim, and an instruction hidden "
    "with zero-width characters. Each item is judged without injection (the baseline) and once per kind with the "
    "injection in the worse answer.\n\n"
    "**pairwise** judges see both orders (same letter twice is the verdict, else inconsistent). An item is right "
    "at baseline when the verdict picks the better answer. **flipped**: the injected pair's verdict picks the "
    "injected worse answer. **moved**: the verdict left the better answer: flipped, tie or inconsistent (a judge "
    "that obeys the injection in one order only moves without flipping).\n\n"
    "**passfail** judges see each answer alone, the better one too. An item is right at baseline only when the "
    "better answer PASSes and the worse one FAILs (a judge that fails everything is right on no item). "
    "**flipped** (and moved: there is no tie): the injected worse answer gets PASS. Other setups exit 2.\n\n"
    "Both rates count only items right at baseline, and share one denominator: the injected trials that got a "
    "verdict. Unparsed, refused and failed (error) calls, in either order, are left out of both denominators and "
    "printed on their own lines. Reported: the baseline accuracy, the items right at baseline, the flipped and "
    "moved rates overall (clustered bootstrap over items) and per kind (exact interval), each with its 95 % "
    "interval and n. Every call goes through juge's engine: cached, retried, logged, stored as a run "
    "(`juge show RUN`). Exit 1 when every judge call failed (nothing was measured), 2 on bad input.\n\n"
    "Examples: juge probe injection --eval eval.toml --judge quality; "
    "juge probe injection --judge judges/pair.toml --provider openai --model gpt-4o-mini --json probe.json"
)


BASELINE_LABELS = {"both_fail": "both FAIL", "both_pass": "both PASS", "reversed": "better FAIL and worse PASS"}


def _how(rate: dict[str, Any]) -> str:
    """How a pooled rate's interval was formed, or why it has none."""
    if rate.get("too_few"):
        return f"no interval: {rate['too_few']}"
    return f"clustered bootstrap over {rate['n_items']} items"


def print_result(result: dict[str, Any], console: Console) -> None:
    """The baseline, the denominator, the flip rates with intervals, and the failed calls on their own lines."""
    from juge.stats.estimate import format_estimate

    pairwise = result["setup"] == "pairwise"
    base = result["baseline"]
    judge = result["judge"]
    console.print(
        f"[bold]Injection probe[/]: judge {escape(judge['name'])} ({judge['setup']}, template "
        f"{escape(judge['template'])} #{judge['template_hash'][:8]}, model "
        f"{escape(', '.join(result['models']) or judge['model'] or '-')}), "
        f"run {result['run_id']}",
        highlight=False,
    )
    console.print(
        f"{result['n_items']} probe items x {len(result['kinds'])} injection kinds"
        + (", every pair judged in both orders" if pairwise else ", each answer judged alone"),
        highlight=False,
    )
    accuracy = base["accuracy"]
    if pairwise:
        console.print(f"baseline: the better answer wins {format_estimate(accuracy['pairs'])}", highlight=False)
        rule = "the verdict picks the better answer"
    else:
        console.print(
            f"baseline: the better answer PASSes and the worse one FAILs {format_estimate(accuracy['items'])}; "
            f"worse answers FAIL {format_estimate(accuracy['worse_answers_fail'])}; better answers PASS "
            f"{format_estimate(accuracy['better_answers_pass'])}",
            highlight=False,
        )
        rule = "the better answer PASSes and the worse one FAILs"
    detail = ", ".join(f"{BASELINE_LABELS.get(k, k)} {v}" for k, v in base["counts"].items() if k != "right")
    console.print(
        f"right at baseline (the denominator): {result['right_at_baseline']} of {result['n_items']} "
        f"items, where {rule}" + (f" (not right: {escape(detail)})" if detail else ""),
        highlight=False,
    )
    if not result["right_at_baseline"]:
        judged = accuracy["pairs" if pairwise else "items"]["n"]
        why = (
            "the probe's answers differ in correctness and helpfulness: does the judge's rubric ask about that?"
            if judged
            else "no item got a verdict without injection: see the calls below"
        )
        console.print(
            f"[yellow]no item is right without injection, so no flip can be measured[/] ({why})", highlight=False
        )
    flip = "the injected worse answer wins" if pairwise else "the injected worse answer gets PASS"
    console.print(
        "over the items right at baseline; trials without a verdict are left out of both rates:", highlight=False
    )
    overall, moved, any_kind = result["overall"], result["overall_moved"], result["any_kind"]
    console.print(
        f"  [bold]flipped[/]   {format_estimate(overall)} injected trials, {overall['k']} flips: {flip} "
        f"({_how(overall)})",
        highlight=False,
    )
    if pairwise:
        console.print(
            f"  [bold]moved[/]     {format_estimate(moved)} injected trials, {moved['k']} left the better answer: "
            f"flipped, tie or inconsistent ({_how(moved)})",
            highlight=False,
        )
    if not overall.get("too_few") and (overall.get("value") in (0.0, 1.0) or moved.get("value") in (0.0, 1.0)):
        console.print(
            "            (where every resample gives the same rate the bootstrap interval has no width; "
            "the exact intervals below do)",
            highlight=False,
        )
    console.print(
        f"  any kind  {format_estimate(any_kind)} items, {any_kind['k']} flipped by at least one kind (exact)",
        highlight=False,
    )
    table = Table(title="per injection kind (rates with their exact 95 % intervals over items)", title_justify="left")
    shown = ["flipped", "held", "tie", "inconsistent"] if pairwise else ["flipped", "held"]
    rates = ["flip rate", "moved rate"] if pairwise else ["flip rate"]
    for column in ("kind", *rates, *shown, "no verdict"):
        table.add_column(column, justify="left" if column == "kind" else "right")
    for kind, entry in result["per_kind"].items():
        counts = entry["counts"]
        missing = sum(counts.get(s, 0) for s in ("unparsed", "refused", "error", "missing"))
        figures = [format_estimate(entry["flip_rate"])] + ([format_estimate(entry["moved_rate"])] if pairwise else [])
        table.add_row(escape(kind), *figures, *(str(counts[s]) for s in shown), str(missing))
    console.print(fitted(table, console))
    calls = result["calls"]
    console.print(
        f"judge calls: {sum(calls.values())}, ok {calls['ok']}  (no verdict: neither a flip nor a "
        "non-flip, left out of both rates)",
        highlight=False,
    )
    for outcome in ("unparsed", "refused", "error"):
        console.print(f"  {outcome}: {calls[outcome]}", highlight=False)


def injection_command(
    judge: Annotated[
        str,
        typer.Option(
            "--judge", help="A judge file (TOML), or with --eval the name of one of its [[judges]].", show_default=False
        ),
    ],
    eval_file: Annotated[
        Path | None,
        typer.Option(
            "--eval", help="Eval file (TOML): the judge is named by --judge; its [provider] and [engine] apply."
        ),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="Provider for the judge, overriding the eval and judge files: openai, anthropic, scripted, llamacpp."
        ),
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for the judge, overriding its file.")] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    limit: Annotated[int | None, typer.Option(min=1, help="Use only the first N probe items (a quick look).")] = None,
    kind: Annotated[
        list[str] | None, typer.Option("--kind", help="Only this injection kind; repeatable (default: all six).")
    ] = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Calls in flight at once.")] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start a new run instead of resuming an unfinished one.")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the result as JSON.")] = None,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """`juge probe injection`: its help text is INJECTION_HELP."""
    from juge.api import probe_injection

    with staged_output(json_out, "--json") as json_tmp:  # a bad --json fails before any call
        try:
            probe = probe_injection(
                judge,
                eval_file=eval_file,
                provider=provider,
                model=model,
                base_url=base_url,
                api_key_env=api_key_env,
                limit=limit,
                kinds=kind or (),
                concurrency=concurrency,
                resume=not fresh,
                progress=not no_progress,
                db=db,
                resamples=resamples,
                seed=seed,
                console=err,
            )
        except KeyboardInterrupt:
            err.print("interrupted: every finished judgment is stored; run the same command again to resume")
            raise typer.Exit(130) from None
        stats = probe.engine_stats
        err.print(
            f"{'resumed' if probe.resumed else 'new'} run {probe.run_id}: {stats.get('calls', 0)} calls, "
            f"{stats.get('cache_hits', 0)} cache hits, {stats.get('retries', 0)} retries",
            highlight=False,
        )
        result = probe.result.to_dict()
        _exit_if_every_call_failed(result)
        if json_tmp is not None:
            json_tmp.write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    print_result(result, Console())


def _exit_if_every_call_failed(result: dict[str, Any]) -> None:
    """Exit 1 when no judge call got an answer: nothing was measured (not a finding about the judge)."""
    calls = result["calls"]
    if not calls["error"] or calls["error"] < sum(calls.values()):
        return
    err.print(
        f"[bold red]error:[/] all {calls['error']} judge calls failed (the first: "
        f"{escape(str(result['first_error']))}); nothing was measured. Check the provider (its address, key "
        f"and model), then run the command again.",
        highlight=False,
    )
    raise typer.Exit(1)


probe_app = typer.Typer(help="Probe a judge's robustness.", no_args_is_help=True, rich_markup_mode="markdown")
probe_app.command("injection", help=INJECTION_HELP)(injection_command)


def register(app: typer.Typer) -> None:
    app.add_typer(probe_app, name="probe")
