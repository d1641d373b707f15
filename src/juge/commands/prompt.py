"""`juge prompt`: the exact messages a judge is sent for one case."""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer
from rich.text import Text

from juge.commands.console import Console
from juge.files import is_stdout, write_atomic
from juge.visible import terminal_safe

if TYPE_CHECKING:
    from juge.runs.results import DryRun, RenderedPrompt


def print_prompts(prompts: Sequence[RenderedPrompt], console: Console) -> None:
    """Each call's messages, verbatim (control characters shown as escapes), under a rule per role."""
    for p in prompts:
        order = f", order {p.order}" if p.order else ""
        step = " (solve-first: its own solution)" if p.step == "solve" else ""
        console.print(
            Text(
                f"judge {p.judge}{step}: {p.setup}, template {p.template} #{p.template_hash}, "
                f"model {p.model or '(none)'}, case {p.case_id}{order}",
                style="bold",
            )
        )
        for m in p.messages:
            console.rule(Text(m["role"]), characters="─")
            # soft wrap: the terminal folds long lines, but no break is inserted, so a redirect is exact
            console.print(Text(terminal_safe(m["content"])), soft_wrap=True)
        if p.allowed:
            console.print(Text(f"(constrained: the answer must be exactly one of {', '.join(p.allowed)})"))
        if p.json_schema:
            console.print(Text("(structured: the provider is asked for " + json.dumps(p.json_schema) + ")"))
        console.rule(characters="─")


def print_dry_run(result: DryRun) -> None:
    """`juge run --dry-run`: the calls per judge and the first prompt of each; nothing is called or stored."""
    out = Console()
    out.print(Text(f"dry run of {result.source}: {result.n_cases} cases; nothing is called or stored", style="bold"))
    if result.system:
        out.print(Text(f"  system under test: {result.system_calls} calls"))
    for name, n in result.calls.items():
        out.print(Text(f"  judge {name}: {n} calls (fewer when answers are in the cache)"))
    print_prompts(result.examples, out)
    for warning in result.warnings:
        Console(stderr=True).print(Text("warning: ", style="yellow") + Text(warning))


def prompt_command(
    judge: Annotated[str, typer.Argument(help="A judge's name in the eval file, or a judge file (TOML).")],
    case: Annotated[
        str | None, typer.Option("--case", help="Case id. Default: the first case the judge takes.")
    ] = None,
    eval_file: Annotated[
        Path | None, typer.Option("--eval", help="Eval file naming the cases and judges. Default: ./eval.toml.")
    ] = None,
    cases: Annotated[
        Path | None, typer.Option("--cases", help="Cases file (JSONL/CSV), with a judge file instead of an eval.")
    ] = None,
    order: Annotated[str | None, typer.Option("--order", help="Pairwise judges: 12 (default) or 21.")] = None,
    json_out: Annotated[
        Path | None, typer.Option("--json", help="Also write the messages as JSON ('-' for standard output).")
    ] = None,
) -> None:
    """Print the exact messages JUDGE is sent for one case (no call is made)."""
    from juge.api import prompt

    prompts = prompt(judge, case=case, eval_file=eval_file, cases=cases, order=order)
    if json_out is not None:
        text = json.dumps([p.to_dict() for p in prompts], indent=2, ensure_ascii=False) + "\n"
        write_atomic(json_out, text)
        if is_stdout(json_out):
            return
    print_prompts(prompts, Console())


def register(app: typer.Typer) -> None:
    app.command("prompt")(prompt_command)
