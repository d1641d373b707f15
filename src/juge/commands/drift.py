"""`juge drift`: the old and the new judge on a human-labelled anchor set, and what a score change owes the judge."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.text import Text

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.endpoint import ApiKeyEnvOption, BaseUrlOption
from juge.commands.inputs import ESTIMATE_OPTIONS, reads_inputs
from juge.commands.policy import JsonOption, ResamplesOption, SeedOption, staged_json
from juge.store import DEFAULT_DB

out = Console(highlight=False, soft_wrap=True)

#: drift's labels are a long file on the anchor items, read as estimate reads its labels; the judge file's setup
#: is the kind; the anchor items take --map and --id.
DRIFT_OPTIONS = ("map", "id", *(name for name in ESTIMATE_OPTIONS if name != "kind"))


@reads_inputs(*DRIFT_OPTIONS)
def drift_command(
    anchor: Annotated[
        Path, typer.Option("--anchor", help="The anchor items (JSONL/CSV cases): a fixed set people labelled.")
    ],
    labels: Annotated[
        Path, typer.Option("--labels", help="The people's labels on the anchor items (item_id, rater_id, label).")
    ],
    judge: Annotated[
        list[Path],
        typer.Option(
            "--judge", help="Judge file: give the old then the new one, or only the new one with --run (the old)."
        ),
    ],
    run: Annotated[
        str | None, typer.Option("--run", help="A stored run of the OLD judge on the anchor items (not called again).")
    ] = None,
    old_run: Annotated[
        str | None,
        typer.Option("--old-run", help="Attribution: the old system run, judged by the old judge (with --new-run)."),
    ] = None,
    new_run: Annotated[
        str | None,
        typer.Option("--new-run", help="Attribution: the new system run, judged by the new judge (with --old-run)."),
    ] = None,
    db: DbOption = str(DEFAULT_DB),
    provider: Annotated[
        str | None, typer.Option(help="Provider for both judges, overriding the judge files (openai, anthropic, ...).")
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    concurrency: Annotated[int | None, typer.Option(min=1, help="Calls in flight at once.")] = None,
    threshold: Annotated[
        float | None, typer.Option(help="Attribution with a score judge: a case passes when its score is >= this.")
    ] = None,
    min_items: Annotated[
        int, typer.Option("--min-items", min=1, help="The fewest labelled anchor items that can conclude.")
    ] = 30,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    source: StudySource = StudySource(),
) -> None:
    """Has the judge moved? Judge a fixed, human-labelled anchor set with the old and the new judge.

    Both judges run through the normal run path (cache, retries, store), or the old judge's answers come from
    a stored run (--run). Prints the items whose verdict changed, each judge's agreement with people (judge vs
    each person; a missing verdict agrees with nobody), the paired difference (new - old) with a clustered
    bootstrap interval, and a conclusion: MOVED (the interval excludes 0), within noise, or too few items.
    With --old-run and --new-run (two system runs judged by the old and the new judge), the new judge re-judges
    the old run's outputs on the anchor items and the score change is split: the judge's part and the system's.
    Exit 0 whatever the conclusion: it is a measurement, not a gate.
    """
    from juge.api import drift

    with staged_json(json_path) as write:
        result = drift(
            anchor, labels, judges=judge, run=run, old_run=old_run, new_run=new_run, db=db, provider=provider,
            base_url=base_url, api_key_env=api_key_env, concurrency=concurrency, threshold=threshold,
            min_items=min_items, resamples=resamples, seed=seed, level=confidence, source=source,
            progress=not no_progress,
        )  # fmt: skip
        if write is not None:
            write(result.to_dict())
    print_drift(result)
    if json_path is not None:
        out.print(Text(f"wrote {json_path}"))


def print_drift(r: Any) -> None:
    from juge.stats.estimate import format_estimate

    for name, side in (("old", r.old), ("new", r.new)):
        ident = side.identity
        out.print(Text(f"{name}  {ident.key}: model {', '.join(ident.models)}, template hash "
                       f"{', '.join(h[:12] for h in ident.template_hashes)} (run {side.run_id[:12]})"))  # fmt: skip
    for check in r.moved:
        out.print(Text("moved: " + (check.words() or "nothing (same model version and template hash)")))
    out.print(Text(f"\n{r.n_changed} of {r.n_items} anchor items changed verdict: "
                   f"{format_estimate(r.changed_share, 1, percent=True)}", style="bold"))  # fmt: skip
    for item in r.changed[:20]:
        people = ", ".join(f"{k} x{v}" for k, v in item.people.items())
        out.print(Text(f"  {item.item_id}: {item.old} -> {item.new} (people: {people})"))
    if len(r.changed) > 20:
        out.print(Text(f"  ... and {len(r.changed) - 20} more (all in --json)"))
    out.print(Text(f"agreement with people  old {format_estimate(r.old.agreement)}  (no verdict: {r.old.missing})"))
    out.print(Text(f"                       new {format_estimate(r.new.agreement)}  (no verdict: {r.new.missing})"))
    out.print(Text(f"paired difference (new - old) {format_estimate(r.difference, signed=True)}"))
    style = {"moved": "bold red", "within noise": "bold green"}.get(r.conclusion, "bold yellow")
    out.print(Text(f"{r.conclusion.upper()}: {r.reason}", style=style))
    if r.attribution is not None:
        a = r.attribution
        out.print(Text(f"\nscore ({a.judge} passes)  old run {a.old_run[:12]} {format_estimate(a.score_old)}, "
                       f"new run {a.new_run[:12]} {format_estimate(a.score_new)}"))  # fmt: skip
        out.print(Text(f"change {format_estimate(a.total_change, signed=True)} = judge "
                       f"{format_estimate(a.judge_part, signed=True)} + system "
                       f"{format_estimate(a.system_part, signed=True)}"))  # fmt: skip
        out.print(Text(a.words, style="bold"))
    for note in r.notes:
        out.print(Text("note: " + note, style="yellow"))
    for warning in r.warnings:
        out.print(Text("warning: " + warning, style="bold yellow"))


def register(app: typer.Typer) -> None:
    app.command("drift")(drift_command)
