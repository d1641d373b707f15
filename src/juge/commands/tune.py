"""`juge tune`: a thin shell over :func:`juge.tune_judge`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.table import Table
from rich.text import Text

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.inputs import TUNE_OPTIONS, reads_inputs
from juge.errors import InputError
from juge.reports.fit import fitted
from juge.store import DEFAULT_DB

if TYPE_CHECKING:
    from juge.tune.models import CandidateResult, Caught, ReferenceRow, TuneResult

TUNE_HELP = """Improve a judge against people, and report how much of the gain is real.

Evaluates candidate judges on the **dev** split: the judge as given, every judge file in
`--variants`, and generated variants (2, 4 and 8 worked examples from labelled dev items, the
verdict alone or reasoning first, the reference answer on/off, solve-first, a 1-4 scale for wider
score scales). Few-shot examples are taken per fold from the other folds of dev groups, so no
verdict rests on its own group's labels.

The choice is made like a policy: PASS/FAIL (and scores at `--threshold`) by Cohen's kappa with
each person, and a candidate that catches fewer failures than one person catches of another's is
never chosen; pairwise by agreement with each person. Then a paired clustered bootstrap difference
against the best, and the **cheapest** candidate within noise of the best. Person vs person and a
trivial judge (always PASS, or the longer answer) are shown beside the candidates.

Prints three figures: **in-sample** (chosen on these labels: optimistic), **out-of-fold**
(cross-fitted choice scored on held folds) and their difference (the **optimism**). `--test` runs
the chosen judge once on the holdout. Writes `OUT/judge.toml` (with its provenance),
`OUT/TUNING.md` and `OUT/tuning.json`. Every call goes through the engine: cached, stored, resumable.
"""


@reads_inputs(*TUNE_OPTIONS)
def tune_command(
    judge: Annotated[Path, typer.Option("--judge", help="The judge file (TOML) to tune.", show_default=False)],
    items: Annotated[
        Path, typer.Option("--items", help="Items with a dev/holdout split (JSONL/CSV; `juge split` adds one).")
    ],
    out: Annotated[Path, typer.Option("--out", help="Folder for judge.toml, TUNING.md and tuning.json.")],
    labels: Annotated[
        Path | None, typer.Option("--labels", help="Human labels (item_id, rater_id, label[, explanation]).")
    ] = None,
    variants: Annotated[
        Path | None, typer.Option("--variants", help="A folder of judge files (TOML) to try as candidates too.")
    ] = None,
    budget: Annotated[
        float | None, typer.Option(min=0, help="Stop starting candidates once this many US$ are spent.")
    ] = None,
    folds: Annotated[int, typer.Option(min=2, max=20, help="Cross-fitting folds over dev groups.")] = 5,
    threshold: Annotated[
        float | None, typer.Option(help="Score judges: a score >= this is a PASS (judge and person alike).")
    ] = None,
    shots: Annotated[str, typer.Option(help="Few-shot sizes to try, comma-separated (empty: none).")] = "2,4,8",
    provider: Annotated[
        str | None, typer.Option(help="Provider for every candidate, overriding the judge file.")
    ] = None,
    model: Annotated[str | None, typer.Option(help="Model for every candidate, overriding the judge file.")] = None,
    propose: Annotated[
        int, typer.Option(min=0, max=10, help="Ask the judge's model for N rewritten rubrics (each a candidate).")
    ] = 0,
    candidates: Annotated[
        str | None,
        typer.Option("--candidates", help="Only these candidates, comma-separated (e.g. as-given,fewshot-4)."),
    ] = None,
    limit: Annotated[int | None, typer.Option(min=2, help="Use only N dev groups (a quick, cheap look).")] = None,
    test: Annotated[bool, typer.Option("--test", help="Run the chosen judge once on the holdout.")] = False,
    force: Annotated[bool, typer.Option("--force", help="With --test: test a holdout again (recorded).")] = False,
    seed: Annotated[int, typer.Option(help="Seed of the folds, the examples and the bootstrap.")] = 0,
    resamples: Annotated[int, typer.Option(min=100, help="Bootstrap resamples.")] = 2000,
    concurrency: Annotated[int, typer.Option(min=1, help="Calls in flight at once.")] = 8,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the result (tuning.json) here.")] = None,
    db: DbOption = str(DEFAULT_DB),
    source: StudySource = StudySource(),
) -> None:
    from juge.api import tune_judge
    from juge.files import staged_output
    from juge.stats.estimate import format_estimate

    try:
        sizes = tuple(int(s) for s in shots.split(",") if s.strip())
    except ValueError:
        raise InputError(f"--shots {shots!r}: give whole numbers separated by commas, e.g. 2,4,8") from None
    if any(k < 1 for k in sizes):
        raise InputError(f"--shots {shots!r}: each size must be at least 1")
    names = tuple(c.strip() for c in (candidates or "").split(",") if c.strip())
    console = Console()
    with staged_output(json_out, "--json") as json_tmp:
        result = tune_judge(
            judge, items=items, labels=labels, out=out, variants=variants, folds=folds, threshold=threshold,
            budget=budget, provider_name=provider, model=model, db=db, limit=limit, shots=sizes, propose=propose,
            candidates=names, test=test, force=force, seed=seed, n_resamples=resamples, concurrency=concurrency, progress=not no_progress,
            source=source,
        )  # fmt: skip
        if json_tmp is not None:
            json_tmp.write_text(json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    console.print(fitted(candidates_table(result), console))  # below 100 columns: one block per candidate
    console.print(Text(f"chosen: {result.chosen}: {result.reason}"))
    measure = "kappa" if result.measure == "kappa" else "agreement"
    console.print(
        f"in-sample    {measure} {format_estimate(result.in_sample)}  (chosen on these labels: optimistic)",
        highlight=False,
    )
    console.print(f"out-of-fold  {measure} {format_estimate(result.out_of_fold)}  (quote this one)", highlight=False)
    if result.optimism is not None:
        console.print(f"optimism     {result.optimism:+.3f}", highlight=False)
    if result.holdout is not None:
        forced = "  FORCED: tested before" if result.holdout.forced else ""
        held = (result.holdout.kappa if result.measure == "kappa" else None) or result.holdout.agreement
        console.print(f"holdout      {measure} {format_estimate(held)}{forced}", highlight=False)
    console.print(Text(f"wrote {out / 'judge.toml'}, {out / 'TUNING.md'}, {out / 'tuning.json'}"))


def candidates_table(result: TuneResult) -> Table:
    """The candidates, then the person-vs-person ceiling and the trivial baseline (no call) beside them."""
    from juge.stats.estimate import format_estimate

    passfail = result.measure == "kappa"
    table = Table(title=Text(f"candidates for {result.judge} ({result.metric})"), title_justify="left")
    columns = ["candidate", "kappa", "agreement", "failures caught", "false flags"] if passfail else [
        "candidate", "agreement"
    ]  # fmt: skip
    for column in [*columns, "vs best", "cost/item", "decision"]:
        table.add_column(column, overflow="fold")

    def figures(row: CandidateResult | ReferenceRow) -> list[str]:
        if not passfail:
            return [format_estimate(row.agreement)]
        return [format_estimate(row.kappa), format_estimate(row.agreement), _caught(row.failures_caught),
                _caught(row.false_flags)]  # fmt: skip

    for c in result.candidates:
        diff = c.difference_to_best
        table.add_row(
            Text(c.name), *figures(c), "—" if diff is None else format_estimate(diff, signed=True),
            f"{c.cost_per_item:.4g} {c.cost_unit}", Text(c.decision),
        )  # fmt: skip
    for ref in [r for r in (result.ceiling, *result.baselines) if r is not None]:
        table.add_row(Text(ref.name), *figures(ref), "", "", Text("reference: makes no call"))
    for name, why in result.skipped.items():
        table.add_row(Text(name), *[""] * (len(columns) + 1), Text(why))
    return table


def _caught(caught: Caught | None) -> str:
    from juge.stats.estimate import format_estimate

    return "—" if caught is None else f"caught {caught.k} of {caught.n} ({format_estimate(caught.rate, with_n=False)})"


def register(app: typer.Typer) -> None:
    app.command("tune", help=TUNE_HELP)(tune_command)
