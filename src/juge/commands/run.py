"""`juge run`, `juge runs`, `juge show`, `juge export`."""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from juge.commands.console import Console
from juge.commands.db_option import DbOption
from juge.commands.endpoint import ApiKeyEnvOption, BaseUrlOption, ModelOption
from juge.commands.inputs import INPUT_OPTIONS, map_with_id
from juge.commands.prompt import print_dry_run
from juge.errors import Fault, InputError
from juge.files import is_stdout, staged_output, write_atomic
from juge.reports.fit import fitted
from juge.store import DEFAULT_DB
from juge.visible import terminal_safe

if TYPE_CHECKING:
    from juge.engine.progress import RunProgress

err = Console(stderr=True)


def _rate(p: int, n: int) -> str:
    return f"{p / n:.1%} ({p}/{n})" if n else "n/a (0)"


def print_summary(summary: dict[str, Any], console: Console | None = None) -> None:
    """Per-check pass rates, per-judge verdicts, and unparsed/refused/error counts on their own lines."""
    console = console or Console()
    n = summary["n_cases"]
    console.print(f"[bold]run {summary['run_id']}[/]: {n} cases, {summary.get('calls', 0)} calls logged")
    if summary["checks"]:
        table = Table(title="Deterministic checks", title_justify="left")
        table.add_column("check")
        table.add_column("pass rate", justify="right")
        for name, c in summary["checks"].items():
            table.add_row(escape(name), _rate(c["passed"], c["n"]))
        console.print(fitted(table, console))
    for name, j in summary["judges"].items():
        console.print(
            f"[bold]Judge {escape(name)}[/]: {j['setup']}, template {escape(j['template'])}"
            f" #{j['template_hash'][:8]}, model {escape(', '.join(j['model']))}",
            highlight=False,
        )
        table = Table()
        table.add_column("verdict")
        table.add_column("count", justify="right")
        verdicts = j.get("pair_verdicts") or j["verdicts"]
        for v, count in verdicts.items():
            table.add_row(escape(str(v)), str(count))
        if j.get("pair_verdicts"):
            table.add_section()
            for v, count in j["verdicts"].items():
                table.add_row(f"letter {escape(str(v))} (per call)", str(count))
        table.add_section()
        for outcome in ("unparsed", "refused", "error"):
            table.add_row(outcome, str(j["outcomes"][outcome]))
            if outcome == "unparsed":  # which rule of the parser contract fired, so a judge's habit shows
                for code, count in (j.get("unparsed_reasons") or {}).items():
                    table.add_row(f"  unparsed: {escape(code)}", str(count))
        console.print(fitted(table, console))
    if summary.get("pass_rate") is not None:
        console.print(f"cases passing every check and judge: {_rate(summary['cases_passed'], n)}", highlight=False)
        console.print(f"cases failing: {summary['cases_failed']}", highlight=False)
        console.print(
            f"cases missing a verdict (refused, unparsed or error; never a pass): {summary['cases_missing']}",
            highlight=False,
        )
    if summary.get("system_errors"):
        console.print(
            f"cases the system under test failed on (no output, not judged; retried on resume): "
            f"{summary['system_errors']}",
            highlight=False,
        )
    cost = summary.get("cost")
    if cost:
        unpriced = f"; {cost['unpriced']} judgments or outputs without a price" if cost["unpriced"] else ""
        console.print(
            f"cost: ${cost['total']:.4f} (judges ${cost['judges']:.4f}, system ${cost['system']:.4f}){unpriced}",
            highlight=False,
        )
    if summary.get("not_counted"):
        console.print(
            f"not counted in the pass rate (score judges; set \\[gate] min_score): "
            f"{escape(', '.join(summary['not_counted']))}",
            highlight=False,
        )


def _read_only(path: Path | None) -> set[str] | None:
    if path is None:
        return None
    if not path.exists():
        raise InputError(f"{path}: --only file not found")
    try:
        ids = {line.strip() for line in path.read_text(encoding="utf-8").splitlines() if line.strip()}
    except UnicodeDecodeError:
        raise InputError(f"{path}: --only file is not UTF-8 text") from None
    except IsADirectoryError:
        raise InputError(f"{path}: --only needs a file of case ids, not a folder") from None
    if not ids:
        raise InputError(f"{path}: --only file lists no case ids")
    return ids


def run_command(
    eval_file: Annotated[
        Path | None, typer.Argument(help="Eval file (TOML) naming cases, system, checks and judges.")
    ] = None,
    cases: Annotated[Path | None, typer.Option(help="Cases file (JSONL/CSV), instead of an eval file.")] = None,
    judge: Annotated[list[Path] | None, typer.Option(help="Judge file (TOML); repeatable. With --cases.")] = None,
    field_map: Annotated[
        str | None,
        typer.Option(
            "--map", help="With --cases: read other column names as juge fields, e.g. id=ticket,output=reply."
        ),
    ] = None,
    id_from: Annotated[str | None, typer.Option("--id", help="With --cases: " + INPUT_OPTIONS["id"].help)] = None,
    member: Annotated[
        str | None,
        typer.Option("--member", help="With --cases: " + INPUT_OPTIONS["member"].help.replace("--items", "--cases")),
    ] = None,
    provider: Annotated[
        str | None,
        typer.Option(
            help="Provider for every judge, overriding the eval and judge files: openai, anthropic, replay, scripted, llamacpp."
        ),
    ] = None,
    base_url: BaseUrlOption = None,
    api_key_env: ApiKeyEnvOption = None,
    model: ModelOption = None,
    replay: Annotated[Path | None, typer.Option(help="Recorded judgments (JSONL) for the replay provider.")] = None,
    only: Annotated[
        Path | None, typer.Option(help="File of case ids (one per line): run only these, e.g. a kept disagreement set.")
    ] = None,
    limit: Annotated[
        int | None,
        typer.Option(
            "--limit", min=1, help="Run only the first N cases of the selection, in file order (a quick, cheap look)."
        ),
    ] = None,
    repeat: Annotated[
        int, typer.Option(min=1, help="Ask each judge N times in the same order (self-consistency).")
    ] = 1,
    concurrency: Annotated[
        int | None, typer.Option(min=1, help="Calls in flight at once (default from the eval file, else 8).")
    ] = None,
    fresh: Annotated[
        bool, typer.Option("--fresh", help="Start a new run instead of resuming an unfinished one.")
    ] = False,
    no_progress: Annotated[bool, typer.Option("--no-progress", help="No progress bar.")] = False,
    json_out: Annotated[Path | None, typer.Option("--json", help="Also write the summary as JSON.")] = None,
    junit: Annotated[
        Path | None,
        typer.Option(
            "--junit",
            help="Also write the run as JUnit XML for CI: a test case per case and judge (a FAIL carries the "
            "judge's raw answer; no verdict is an error), per case and check, and per bound of the [gate].",
        ),
    ] = None,
    wait: Annotated[
        bool,
        typer.Option(
            "--wait",
            help='Batch mode ([engine] mode = "batch"): wait until every batch has ended, checking every '
            "[engine] batch_poll seconds (without it, a run whose batches are still out exits 75).",
        ),
    ] = False,
    dry_run: Annotated[
        bool,
        typer.Option(
            "--dry-run", help="Print the calls each judge would make and one rendered prompt each; call nothing."
        ),
    ] = False,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """Run an evaluation: checks first, then every judge on every case (pairs in both orders).

    Re-running the same eval resumes an interrupted run and answers repeated prompts
    from the cache. Exit code 1 when a gate in the eval file fails, 2 on bad input, 75 when
    batches sent in batch mode are still being answered (run the same command again to collect).
    """
    # From its own module, not juge.api: that imports every feature (policy, label, view), about a third of a
    # second of start-up that every run, however small, would pay.
    from juge.data.readers import parse_mapping
    from juge.runs.api import run

    field_map = map_with_id(field_map, id_from)
    if member:
        from juge.data.readers import member_path

        if cases is None:
            raise InputError("--member names a member of the --cases archive; give --cases ARCHIVE")
        cases = Path(member_path(cases, member))

    if dry_run:
        from juge.runs.api import dry_run as plan

        if junit is not None:
            raise InputError("--junit writes the tests of a finished run; --dry-run runs nothing")
        planned = plan(
            eval_file, cases=cases, judges=judge, mapping=parse_mapping(field_map), only=_read_only(only),
            limit=limit, repeat=repeat, model=model, provider=provider or ("replay" if replay else None),
        )  # fmt: skip
        if json_out is not None:
            write_atomic(json_out, planned.to_json(indent=2) + "\n")
        print_dry_run(planned)
        return
    with staged_output(json_out, "--json") as json_tmp, staged_output(junit, "--junit") as junit_tmp:
        try:
            result = run(
                eval_file,
                cases=cases,
                judges=judge,
                mapping=parse_mapping(field_map),
                db=db,
                only=_read_only(only),
                limit=limit,
                repeat=repeat,
                concurrency=concurrency,
                progress=False if no_progress else _progress,
                resume=not fresh,
                provider=provider,
                replay=replay,
                wait=wait,
                base_url=base_url,
                api_key_env=api_key_env,
                model=model,
            )
        except KeyboardInterrupt:
            err.print("interrupted: every finished judgment is stored; run the same command again to resume")
            raise typer.Exit(130) from None
        if json_tmp is not None:
            shown = result.summary.to_dict() if result.summary is not None else _pending_json(result)
            json_tmp.write_text(json.dumps(shown, indent=2, ensure_ascii=False, default=str) + "\n", encoding="utf-8")
        if junit_tmp is not None:
            from juge.runs.junit import run_junit

            junit_tmp.write_text(run_junit(result, db=db), encoding="utf-8")
    if result.resumed:
        err.print(f"resuming run [bold]{result.run_id}[/] (same eval file, judges, system prompt and data)")
    if result.pending is not None:
        _print_warnings(result.warnings)
        _print_pending(result)
        raise typer.Exit(BATCH_PENDING_EXIT)
    stats = result.engine_stats
    err.print(
        f"stored {result.stored_now} judgments; {stats.get('calls', 0)} calls, "
        f"{stats.get('cache_hits', 0)} cache hits, {stats.get('retries', 0)} retries"
    )
    if result.reused:
        err.print(
            f"every answer came from the cache and matches run {result.run_id}: no new run stored "
            "(--fresh keeps a new one)",
            markup=False,
        )
    assert result.summary is not None  # a finished run
    print_summary(result.summary.to_dict())
    _print_warnings(result.warnings)
    if result.first_error is not None:
        raise Fault(
            f"run {result.run_id}: no judgment could be made, every call failed; the first error: "
            f"{result.first_error} (fix it, then run the same command again to resume)"
        )
    if result.gate is not None and not result.gate.passed:
        for failure in result.gate.failures:
            err.print(f"[red]gate failed:[/] {escape(failure)}", highlight=False)
        raise typer.Exit(1)


BATCH_PENDING_EXIT = 75  # EX_TEMPFAIL: not done yet, try again later


def _progress(description: str, total: int, completed: int) -> RunProgress:
    """The run's progress on standard error: a bar on a terminal, a line now and then elsewhere."""
    from juge.engine.progress import run_progress

    return run_progress(err, description, total, completed)


def _print_warnings(warnings: list[str]) -> None:
    for warning in warnings:
        err.print(f"[yellow]warning:[/] {escape(warning)}", highlight=False)


def _pending_json(result: Any) -> dict[str, Any]:
    return {
        "run_id": result.run_id,
        "status": "batches_pending",
        "stored_now": result.stored_now,
        "batches": result.pending,
    }


def _print_pending(result: Any) -> None:
    err.print(
        f"run {result.run_id}: stored {result.stored_now} judgments; {len(result.pending)} batch(es) still being "
        "answered. Run the same command again to collect what has ended (or add --wait).",
        markup=False,
    )
    for batch in result.pending:
        counts = ", ".join(f"{k} {v}" for k, v in batch["counts"].items())
        err.print(f"  batch {batch['id']}: {batch['state']}" + (f" ({counts})" if counts else ""), markup=False)


def show_command(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    case: Annotated[str | None, typer.Option(help="Show only this case id.")] = None,
    outcome: Annotated[
        str | None,
        typer.Option(
            "--outcome",
            help="Only judgments with this outcome (unparsed, refused, error), or cases that fail (fail).",
        ),
    ] = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Only this judge's judgments.")] = None,
    limit: Annotated[int | None, typer.Option("--limit", min=1, help="At most N cases.")] = None,
    full: Annotated[bool, typer.Option("--full", help="Do not shorten raw judge texts.")] = False,
    json_out: Annotated[
        Path | None,
        typer.Option("--json", help="Also write the cases shown as JSON, texts whole ('-' for standard output)."),
    ] = None,
    db: DbOption = str(DEFAULT_DB),
) -> None:
    """Per-case results: checks, verdicts, and the raw judge text."""
    from juge.api import show

    with staged_output(json_out, "--json") as json_tmp:
        shown = show(run_id, db=db, case=case, outcome=outcome, judge=judge, limit=limit)
        if json_tmp is not None:
            json_tmp.write_text(shown.to_json(indent=2) + "\n", encoding="utf-8")
    if is_stdout(json_out):
        return
    from juge.judges.pairwise import letter_meaning

    out = Console()
    run = shown.run
    out.print(f"[bold]run {run.id}[/] {escape(run.name or '')} data {run.dataset_hash[:12]} juge {run.juge_version}")
    if not shown.cases:
        asked = [
            f"case {case}" if case else "",
            f"outcome {outcome}" if outcome else "",
            f"judge {judge}" if judge else "",
        ]
        cases_in_run = f"{shown.n_cases} case{'s' if shown.n_cases != 1 else ''}"
        out.print(
            f"no case matches {', '.join(a for a in asked if a) or 'the run'}: the run has {cases_in_run}",
            markup=False,
            highlight=False,
        )
    for c in shown.cases:
        out.rule(escape(c.id + (f" [{c.category}]" if c.category else "")))
        for name, check in c.checks.items():
            mark = "[green]pass[/]" if check.passed else f"[red]FAIL[/] {escape(check.reason or '')}"
            out.print(f"  check {escape(name)}: {mark}", highlight=False)
        for j in c.judgments:
            order = f" order {j.order} ({_SHOWN[j.order]})" if j.order else ""
            rep = f" repeat {j.repeat}" if j.repeat else ""
            means = letter_meaning(str(j.verdict), j.order) if j.order and j.outcome == "ok" else None
            verdict = (
                escape(str(j.verdict)) + (f" ({means})" if means else "")
                if j.outcome == "ok"
                else f"[red]{j.outcome}[/]" + (f" ({escape(j.reason)})" if j.reason else "")
            )
            out.print(f"  judge {escape(j.judge)}{order}{rep} ({escape(j.model)}): {verdict}", highlight=False)
            text = j.text if full or len(j.text) <= 400 else j.text[:400] + " …"
            out.print("    " + terminal_safe(text).replace("\n", "\n    "), markup=False, highlight=False)
        for p in c.pair_verdicts:
            rep = f" repeat {p.repeat}" if p.repeat else ""
            out.print(
                f"  [bold]judge {escape(p.judge)}{rep} verdict, both orders in the fixed order:[/]"
                f" {p.verdict} ({p.meaning})",
                highlight=False,
            )
    if shown.cases and (outcome or judge or limit):
        what = ", ".join(x for x in (f"outcome {outcome}" if outcome else "", f"judge {judge}" if judge else "") if x)
        err.print(
            f"showing {len(shown.cases)} of {shown.n_matching} cases"
            + (f" with {what}" if what else "")
            + f" ({shown.n_cases} in the run)",
            markup=False,
        )


_SHOWN = {"12": "answer 1 shown as A", "21": "answer 2 shown as A"}


def export_command(
    run_id: Annotated[str, typer.Argument(help="Run id (or a unique prefix).")],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="Output file: .jsonl, .csv or .parquet (or any, with --format).")
    ],
    format: Annotated[
        str | None,
        typer.Option(
            "--format",
            help="jsonl, csv or parquet (default: the file's suffix); inspect (an Inspect AI eval log), "
            "promptfoo (a results file for its viewer) or otel (OTLP JSON spans with the verdicts, in the "
            "traces the cases came from).",
        ),
    ] = None,
    route: Annotated[
        Path | None,
        typer.Option(
            "--route", help="--format otel: a `juge route --json` file; each case's span carries the policy's decision."
        ),
    ] = None,
    wide: Annotated[
        bool, typer.Option("--wide", help="One row per case (a column per judge's verdict) instead of per judgment.")
    ] = False,
    db: DbOption = str(DEFAULT_DB),
    raw_csv: Annotated[
        bool,
        typer.Option(
            "--raw-csv",
            help="CSV only: write text cells exactly as stored, even those a spreadsheet would run as a "
            "formula (by default a cell starting with = + - @ or a tab is prefixed with ').",
        ),
    ] = False,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Also write what was written (file, rows, columns) as JSON ('-' for standard output)."
        ),
    ] = None,
) -> None:
    """Export a run, one row per judgment (raw text, verdict, outcome, versions, checks, case fields).

    CSV and Parquet have one column per field with native types: `verdict` a plain word or number,
    `score`, `criterion.NAME`, `p.ANSWER`, `check.NAME`, `category`, `question`, `group`, `meta.KEY`.
    JSONL keeps checks, distributions and meta nested. JSONL and Parquet keep every text exactly as
    stored. In CSV, model text that starts like a spreadsheet formula is prefixed with a quote so
    opening the file cannot run it (--raw-csv turns this off).

    --format inspect, promptfoo or otel writes the run for those tools; what each cannot carry is
    printed (and in --json's `lost`). docs/integrations.md says which fields survive."""
    from juge.api import export

    with staged_output(json_out, "--json") as json_tmp:  # staged first: a bad --json fails before -o is written
        result = export(run_id, output, db=db, format=format, wide=wide, raw_csv=raw_csv, route=route)  # type: ignore[arg-type]  # checked there
        if json_tmp is not None:
            json_tmp.write_text(result.to_json(indent=2) + "\n", encoding="utf-8")
    if result.format in ("inspect", "promptfoo", "otel"):
        linked = f", {result.linked} in the traces they came from" if result.linked is not None else ""
        err.print(f"wrote {result.rows} judgments as {result.format} to {result.path}{linked}", markup=False)
        for lost in result.lost:
            err.print(f"  not carried: {lost}", markup=False)
    else:
        err.print(f"wrote {result.rows} rows to {result.path}", markup=False)


def register(app: typer.Typer) -> None:
    app.command("run")(run_command)
    app.command("show")(show_command)
    app.command("export")(export_command)
