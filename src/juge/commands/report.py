"""`juge report`: a calibration result, a stored run or a comparison of two runs as a self-contained HTML page,
Markdown, or normalised JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from juge.calibration.source import StudySource
from juge.commands.console import Console
from juge.commands.inputs import ITEM_OPTIONS, reads_inputs
from juge.errors import InputError
from juge.files import is_stdout
from juge.store import DEFAULT_DB

REPORT_HELP = (
    "Turn a calibration result, a stored run or a comparison of two runs into a report people would rather "
    "read.\n\n"
    "Every figure is shown with its 95 % interval and n; the model, template and data versions are in the "
    "header; refused, unparsed and error calls have their own rows; a figure the calibration file does not "
    "contain is shown as 'n/a', never filled in. Dataset and model text is HTML-escaped.\n\n"
    "Also a stored run (--run RUN_ID: check pass rates, each judge's verdicts and unparsed/refused/error calls, "
    "the failing cases with the raw judge text) or a comparison of two runs (--compare OLD NEW: transitions, "
    "the paired difference of pass rates with its interval, the McNemar p, the changed cases with both raw "
    "outputs).\n\n"
    "Examples: juge report juge-demo/calibration.json -o report.html --policy policy.json; "
    "juge report --run 3f2a -o run.html; juge report --compare 3f2a 9c1b -o compare.html; "
    "juge report --run 3f2a --format md-summary -o comment.md"
)


@reads_inputs(*ITEM_OPTIONS)
def report_command(
    calibration: Annotated[
        Path | None,
        typer.Argument(
            help="A calibration result written by `juge calibrate --json` (or `juge demo`). "
            "Leave out with --run or --compare.",
            show_default=False,
        ),
    ] = None,
    run: Annotated[
        str | None,
        typer.Option("--run", metavar="RUN_ID", help="Report on this stored run (id or unambiguous prefix)."),
    ] = None,
    compare: Annotated[
        tuple[str, str] | None,
        typer.Option("--compare", metavar="OLD NEW", help="Report what changed from run OLD to run NEW (same cases)."),
    ] = None,
    db: Annotated[
        str,
        typer.Option(
            "--db",
            envvar="JUGE_DB",
            help="juge database for --run and --compare (a SQLite file or a postgresql:// URL); for a calibration "
            "of a stored run, where its cases are (default: the store the calibration names).",
        ),
    ] = str(DEFAULT_DB),
    output: Annotated[
        Path | None,
        typer.Option(
            "--output",
            "-o",
            help="Where to write the report. Default: the calibration file's name with the "
            "format's suffix (report.json gets '.report.json'); with --run, run-ID.html; with --compare, "
            "compare-OLD-NEW.html.",
        ),
    ] = None,
    fmt: Annotated[
        str | None,
        typer.Option(
            "--format",
            "-f",
            help="html (one self-contained page with plots, no network), md (the same numbers as "
            "Markdown tables), json (the normalised data the HTML is made from), or md-summary (with --run or "
            "--compare: a short Markdown for a pull-request comment: the pass rate, the gate, the cases whose "
            "verdict changed since the previous run of the eval, or since OLD). Default: the -o suffix (.md, "
            ".json), else html.",
        ),
    ] = None,
    policy: Annotated[
        Path | None,
        typer.Option(
            "--policy",
            help="A policy JSON: its routes are listed and the categories sent to a person are marked "
            "in the per-category plot and table.",
        ),
    ] = None,
    policy_test: Annotated[
        Path | None,
        typer.Option(
            "--policy-test",
            help="The held-out test of the policy (`juge policy test --json`): its figures get their own section.",
        ),
    ] = None,
    audit: Annotated[
        Path | None,
        typer.Option(
            "--audit",
            help="The weekly audits read back (`juge audit status --json`): a section with agreement by week "
            "against the policy's bar.",
        ),
    ] = None,
    items: Annotated[
        Path | None,
        typer.Option(
            "--items",
            help="The study's items file (JSONL/CSV): adds the question, both answers and each rater's "
            "vote to the disagreement examples. A calibration of a stored run (calibrate --run) needs none: "
            "the run's cases are read from its store.",
        ),
    ] = None,
    top: Annotated[int, typer.Option(help="Disagreement examples per judge.")] = 3,
    threshold: Annotated[
        float | None, typer.Option(help="--compare with score judges: a case passes when its score is >= this.")
    ] = None,
    allow_different_judges: Annotated[
        bool,
        typer.Option(
            "--allow-different-judges",
            help="--compare even when the judge versions or rubrics differ (the report is marked NOT COMPARABLE).",
        ),
    ] = False,
    max_cases: Annotated[int, typer.Option(help="--run: at most this many failing cases are shown in full.")] = 200,
    seed: Annotated[int, typer.Option(help="--compare: bootstrap seed.")] = 0,
    resamples: Annotated[int, typer.Option(help="--compare: bootstrap resamples.")] = 2000,
    source: StudySource = StudySource(),
) -> None:
    """`juge report`: its help text is REPORT_HELP."""
    from juge.api import report, run_report
    from juge.reports.write import SUFFIXES, format_for

    fmt = format_for(output, fmt)
    if sum(x is not None for x in (calibration, run, compare)) != 1:
        raise InputError("give exactly one of: a calibration file, --run RUN_ID, or --compare OLD NEW")
    if calibration is None:
        path = run_report(
            run,
            compare,
            db=db,
            path=output,
            fmt=fmt,  # type: ignore[arg-type]
            threshold=threshold,
            allow_different_judges=allow_different_judges,
            max_cases=max_cases,
            seed=seed,
            resamples=resamples,
        )
    else:
        if output is None:
            suffix = ".report.json" if fmt == "json" else SUFFIXES[fmt]
            output = calibration.with_name(calibration.stem + suffix)
        if output.resolve() == calibration.resolve():
            raise InputError(f"{output}: the report would overwrite the calibration file; choose another -o path")
        if source.mapping and items is None:
            raise InputError("--map reads the columns of --items; give --items FILE too")
        path = report(
            calibration, output, fmt, policy=policy, policy_test=policy_test, items=items, top=top,  # type: ignore[arg-type]
            items_map=source.mapping, audit=audit, db=None if db == str(DEFAULT_DB) else db,
        )  # fmt: skip
    if not is_stdout(path):
        Console().print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report", help=REPORT_HELP)(report_command)
