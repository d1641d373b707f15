"""`juge import traces`: production traces exported from a trace store, as a cases file."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from juge.commands.console import Console
from juge.files import staged_output

import_app = typer.Typer(
    help="Read what other tools recorded as juge's inputs.", no_args_is_help=True, rich_markup_mode="markdown"
)


@import_app.command("traces")
def traces_command(
    file: Annotated[
        Path,
        typer.Argument(help="The trace export: OTLP JSON (or JSON lines), Langfuse JSON, Phoenix JSONL or Parquet."),
    ],
    format: Annotated[
        str,
        typer.Option(
            "--format",
            help="otel (OpenTelemetry GenAI spans as OTLP JSON), langfuse (its traces and observations) "
            "or phoenix (its spans, OpenInference attributes).",
        ),
    ],
    output: Annotated[
        Path, typer.Option("-o", "--output", help="The cases file to write (.jsonl), for juge run --cases.")
    ],
    sample: Annotated[
        int | None, typer.Option(help="Keep at most N traces in all (drawn with --seed, after --per-day).")
    ] = None,
    per_day: Annotated[
        int | None, typer.Option("--per-day", help="Keep at most N traces of each UTC day (drawn with --seed).")
    ] = None,
    seed: Annotated[int, typer.Option(help="The seed of the draws: the same seed keeps the same traces.")] = 0,
    json_out: Annotated[
        Path | None,
        typer.Option(
            "--json", help="Also write the counts (read, skipped, written, per day) as JSON ('-' for standard output)."
        ),
    ] = None,
) -> None:
    """Turn exported traces into cases: one per trace, with the user's question, the answer given, the
    retrieved documents as context, the model, start and end times, and the trace id as id and group.

    A trace without a question or an answer is skipped and counted. The cases file is what `juge run
    --cases` reads, so production traffic can be judged, labelled and routed. The texts are untrusted
    case text, delimited where they enter a judge's prompt.
    """
    from juge.api import import_traces

    with staged_output(json_out, "--json") as json_tmp:
        result = import_traces(file, output, format=format, sample=sample, per_day=per_day, seed=seed)  # type: ignore[arg-type]  # checked there
        if json_tmp is not None:
            json_tmp.write_text(result.to_json(indent=2) + "\n", encoding="utf-8")
    skipped = ", ".join(f"{n} {why}" for why, n in result.skipped.items())
    Console().print(
        f"wrote {result.cases} cases to {result.path} from {result.traces} traces"
        + (f" (skipped {skipped})" if skipped else "")
        + (f", days {', '.join(f'{d}: {n}' for d, n in result.days.items())}" if result.days else ""),
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.add_typer(import_app, name="import")
