"""`juge report`: a calibration result as a self-contained HTML page, Markdown, or normalised JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Optional

import typer
from rich.console import Console

from juge.errors import InputError


REPORT_HELP = (
    "Turn a calibration result into a report people would rather read.\n\n"
    "Every figure is shown with its 95 % interval and n; the model, template and data versions are in the "
    "header; refused, unparsed and error calls have their own rows; a figure the calibration file does not "
    "contain is shown as 'not available', never filled in. Dataset and model text is HTML-escaped.\n\n"
    "Example: juge report juge-demo/calibration.json -o report.html --policy policy.json"
)


def report_command(
    calibration: Annotated[Path, typer.Argument(
        help="A calibration result written by `juge calibrate --json` (or `juge demo`).")],
    output: Annotated[Optional[Path], typer.Option(
        "--output", "-o", help="Where to write the report. Default: the calibration file's name with the "
        "format's suffix (report.json gets '.report.json').")] = None,
    fmt: Annotated[str, typer.Option(
        "--format", "-f", help="html (one self-contained page with plots, no network), md (the same numbers as "
        "Markdown tables) or json (the normalised data the HTML is made from).")] = "html",
    policy: Annotated[Optional[Path], typer.Option(
        "--policy", help="A policy JSON: its routes are listed and the categories sent to a person are marked "
        "in the per-category plot and table.")] = None,
    policy_test: Annotated[Optional[Path], typer.Option(
        "--policy-test", help="The held-out test of the policy (`juge policy test --json`): its figures get their "
        "own section.")] = None,
    items: Annotated[Optional[Path], typer.Option(
        "--items", help="The study's items file (JSONL/CSV): adds the question, both answers and each rater's "
        "vote to the disagreement examples.")] = None,
    top: Annotated[int, typer.Option(help="Disagreement examples per judge.")] = 3,
) -> None:
    """`juge report`: its help text is REPORT_HELP."""
    from juge.report import FORMATS, SUFFIXES, read_calibration, read_json_object, write_report

    if fmt not in FORMATS:
        raise InputError(f"--format must be one of {', '.join(FORMATS)}, got {fmt!r}")
    if top < 0:
        raise InputError("--top must be 0 or more")
    result = read_calibration(calibration)
    policy_obj = read_json_object(policy, "policy") if policy is not None else None
    test_obj = read_json_object(policy_test, "policy test") if policy_test is not None else None
    if output is None:
        suffix = ".report.json" if fmt == "json" else SUFFIXES[fmt]
        output = calibration.with_name(calibration.stem + suffix)
    if output.resolve() == calibration.resolve():
        raise InputError(f"{output}: the report would overwrite the calibration file; choose another -o path")
    path = write_report(result, output, fmt, policy=policy_obj, policy_test=test_obj, items=items, top=top, source=calibration.name)
    Console().print(f"wrote {path}", highlight=False, markup=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("report", help=REPORT_HELP)(report_command)
