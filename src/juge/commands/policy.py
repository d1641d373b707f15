"""`juge policy derive|test`, `juge route`, `juge audit-sample`, `juge compare`, `juge estimate`."""

from __future__ import annotations

import functools
import json
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any, Optional

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from juge.errors import InputError
from juge.store import DEFAULT_DB, RunNotFound, Store

out = Console(highlight=False)
err = Console(stderr=True, highlight=False)

DbOption = Annotated[Path, typer.Option("--db", help="juge database (SQLite).", envvar="JUGE_DB")]
JsonOption = Annotated[Optional[Path], typer.Option("--json", help="Also write the numbers as JSON to this file.")]
SeedOption = Annotated[int, typer.Option(help="Seed of the bootstrap resamples.")]
ResamplesOption = Annotated[int, typer.Option("--resamples", min=100, help="Bootstrap resamples.")]


def exits_2_on_input_error(fn: Callable[..., None]) -> Callable[..., None]:
    """Print an InputError (or an unknown run id) and exit 2, also when the app is run without `juge.cli.main`."""

    @functools.wraps(fn)
    def wrapper(*args: Any, **kwargs: Any) -> None:
        try:
            fn(*args, **kwargs)
        except (InputError, RunNotFound) as exc:
            err.print(Text("error: ", style="bold red") + Text(str(exc)), soft_wrap=True)
            raise typer.Exit(2) from None

    return wrapper


def write_atomic(path: Path, text: str) -> None:
    """Write via a temporary file in the same folder and rename: never a half-written file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def write_json(path: Path | None, data: dict[str, Any]) -> None:
    if path is not None:
        write_atomic(path, json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        out.print(Text(f"wrote {path}"))


def fmt(e: dict[str, Any] | None, digits: int = 3) -> str:
    """An estimate dict as text: ``0.712 [0.650, 0.770] n=155``."""
    if not e or e.get("value") is None:
        return f"n/a n={e.get('n', 0) if e else 0}"
    text = f"{e['value']:.{digits}f}"
    if e.get("low") is not None and e.get("high") is not None:
        text += f" [{e['low']:.{digits}f}, {e['high']:.{digits}f}]"
    return f"{text} n={e['n']}"


def _clip(text: str | None, limit: int = 400) -> str:
    if text is None:
        return "(none)"
    return text if len(text) <= limit else text[:limit] + f"... ({len(text) - limit} more characters in --json)"


# ---- estimate ------------------------------------------------------------------------------
@exits_2_on_input_error
def estimate_command(
    run: Annotated[str, typer.Option("--run", help="Run id (or an unambiguous prefix) in the store.")],
    labels: Annotated[Path, typer.Option("--labels", help="Human labels (JSONL/CSV: item_id, rater_id, label) on a random subset of the run's cases.")],
    db: DbOption = DEFAULT_DB,
    threshold: Annotated[Optional[float], typer.Option(help="For score judges: a case passes when its score is >= this.")] = None,
    label_threshold: Annotated[Optional[float], typer.Option(help="For score labels: a person says PASS when the score is >= this.")] = None,
    confidence: Annotated[float, typer.Option(min=0.5, max=0.999, help="Confidence level of the intervals.")] = 0.95,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
) -> None:
    """Corrected pass rate of a run: the judge's rate corrected by human labels on a random subset.

    Prints the judge-only rate, the human-only rate, the PPI++ estimate (prediction-powered
    inference with a power-tuned weight, CLT interval) and the sensitivity/specificity
    plug-in (Rogan-Gladen, bootstrap interval), and which one to report and why. A case
    passes when all its checks pass and every PASS/FAIL judge says PASS; a missing verdict
    counts as a fail in the corrections (fail closed) and is counted on its own line.
    The labelled cases must be a random sample of the run's cases.
    """
    from juge.data.readers import read_labels
    from juge.study.estimate import corrected_pass_rate, human_pass_shares
    from juge.study.verdicts import case_outcomes

    with Store(db) as store:
        run_row = store.get_run(run)
        cases = store.run_cases(run_row["id"])
        outcomes = case_outcomes([c.id for c in cases], store.judgments(run_row["id"]),
                                 store.check_results(run_row["id"]), threshold=threshold)
    human = human_pass_shares(read_labels(labels), threshold=label_threshold)
    result = corrected_pass_rate(outcomes, human, confidence=confidence, n_resamples=resamples, seed=seed)
    result["run_id"] = run_row["id"]
    result["dataset_hash"] = run_row["dataset_hash"]
    table = Table(title=f"Pass rate of run {run_row['id']} ({result['n_cases']} cases, {result['n_labelled']} labelled)",
                  title_justify="left")
    table.add_column("estimate")
    table.add_column(f"value [{confidence:.0%} interval] n", justify="right")
    table.add_column("what it rests on")
    table.add_row("judge only", fmt(result["judge_only"]), "the judge's verdicts; biased by its errors")
    table.add_row("human only", fmt(result["human_only"]), "the labelled cases alone")
    table.add_row("PPI++ (recommended)", fmt(result["ppi"]), f"labels + judge, lambda = {result['ppi']['lambda']:.2f}")
    rg = result["rogan_gladen"]
    sens_spec = ("sens/spec undefined" if rg["sensitivity"] is None or rg["specificity"] is None
                 else f"sens {rg['sensitivity']:.3f}, spec {rg['specificity']:.3f}")
    table.add_row("sens/spec plug-in", fmt(rg), sens_spec)
    table.add_section()
    table.add_row("missing verdict", str(result["n_missing_verdict"]), "unparsed/refused/error: never a pass")
    out.print(table)
    out.print(Text("Why PPI++: " + result["why"]))
    for note in result["notes"]:
        out.print(Text("note: " + note, style="yellow"))
    write_json(json_path, result)


# ---- compare -------------------------------------------------------------------------------
@exits_2_on_input_error
def compare_command(
    run_a: Annotated[str, typer.Argument(help="The old run (id or unambiguous prefix).")],
    run_b: Annotated[str, typer.Argument(help="The new run, on the same cases.")],
    db: DbOption = DEFAULT_DB,
    threshold: Annotated[Optional[float], typer.Option(help="For score judges: a case passes when its score is >= this.")] = None,
    allow_different_judges: Annotated[bool, typer.Option(
        "--allow-different-judges", help="Compare even when the judge versions or rubrics differ (flagged as NOT COMPARABLE).")] = False,
    json_path: JsonOption = None,
    seed: SeedOption = 0,
    resamples: ResamplesOption = 2000,
) -> None:
    """Compare two runs of the same cases and show only what changed.

    A case passes when all its checks pass and every PASS/FAIL judge says PASS (score
    judges: score >= --threshold); a refused/unparsed/error judgment makes the case
    missing, never a pass. Reports pass->fail and fail->pass transitions, the paired
    difference of pass rates (new - old) with a paired bootstrap interval, the exact
    McNemar p-value, and every changed case with both raw outputs. Refuses (exit 2) when
    the runs used different judge models, templates or template hashes.
    """
    from juge.study.compare import compare_runs

    with Store(db) as store:
        result = compare_runs(store, run_a, run_b, threshold=threshold,
                              allow_different_judges=allow_different_judges, n_resamples=resamples, seed=seed)
    for warning in result["warnings"]:
        err.print(Text("WARNING: " + warning, style="bold red"))
        out.print(Text("WARNING: " + warning, style="bold red"))
    a, b = result["run_a"], result["run_b"]
    t = result["transitions"]
    table = Table(title=f"{a['id']} (old) -> {b['id']} (new): {result['n_paired']} cases with a verdict in both",
                  title_justify="left")
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
    out.print(table)
    if not result["changed"]:
        out.print("No case changed verdict.")
    for case in result["changed"]:
        arrow = case["transition"].replace("->", "→")
        out.print(Text(f"\n{case['item_id']}: {arrow}", style="bold"))
        out.print(Text("question: " + _clip(case["question"], 200)))
        for side, label in (("a", "old"), ("b", "new")):
            for slot, text in case[side]["outputs"].items():
                out.print(Text(f"  {label} {slot}: ", style="cyan") + Text(_clip(text)))
            for reason in case[side]["reasons"]:
                out.print(Text(f"  {label} why: {reason}"))
    write_json(json_path, result)


def register(app: typer.Typer) -> None:
    app.command("estimate")(estimate_command)
    app.command("compare")(compare_command)
