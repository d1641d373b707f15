"""`juge split`: add a dev/holdout split by group to a file of items or cases."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console

from juge.data.readers import read_rows, split_of
from juge.errors import InputError, input_error
from juge.files import write_atomic


def split_rows(
    rows: list[tuple[int, dict[str, Any]]], path: Path, *, by: str, holdout: float, seed: int
) -> list[dict[str, Any]]:
    """The rows with a `split` field (dev/holdout) that keeps every value of `by` on one side."""
    out = []
    for lineno, row in rows:
        group = row.get(by)
        if group is None or group == "":
            raise input_error(path, f"no value to split by (--by {by})", line=lineno, field=by)
        if isinstance(group, (dict, list)):
            raise input_error(
                path, f"must be a single value to split by, not a {type(group).__name__}", line=lineno, field=by
            )
        out.append({**row, "split": split_of(str(group), holdout=holdout, seed=seed)})
    return out


def _render(rows: list[dict[str, Any]], suffix: str) -> str:
    if suffix in {".csv", ".tsv"}:
        buf = io.StringIO()
        writer = csv.DictWriter(
            buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), delimiter="\t" if suffix == ".tsv" else ","
        )
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)


def split_command(
    items: Annotated[Path, typer.Option("--items", help="Items or cases (JSONL or CSV).")],
    output: Annotated[
        Path,
        typer.Option("-o", "--output", help="Where to write the rows with a `split` field (same format as the input)."),
    ],
    by: Annotated[
        str,
        typer.Option(
            help="The field that must stay on one side: the question, the customer, "
            "the conversation. Every row needs it."
        ),
    ] = "group",
    holdout: Annotated[
        float, typer.Option(help="Share of groups (not rows) that go to holdout, between 0 and 1.")
    ] = 0.5,
    seed: Annotated[
        int, typer.Option(help="A different seed gives a different split; the same seed the same one.")
    ] = 0,
    force: Annotated[bool, typer.Option("--force", help="Replace an existing `split` field.")] = False,
) -> None:
    """Add a dev/holdout split by group, so no group is on both sides.

    Policy choices are made on dev; the holdout is tested once (`juge policy test`). The split
    depends on each group's value and the seed alone, so it is stable: new rows never move an
    existing group.
    """
    if not 0.0 < holdout < 1.0:
        raise InputError(f"--holdout {holdout}: give a share between 0 and 1, e.g. 0.3")
    if output.resolve() == items.resolve():
        raise InputError(f"{output}: write the split to a new file, not over its input")
    if output.suffix.lower() != items.suffix.lower():
        raise InputError(f"{output}: keep the input's format ({items.suffix})")
    rows = read_rows(items)
    if not force:
        for lineno, row in rows:
            if row.get("split") not in (None, ""):
                raise input_error(items, "already has a split; pass --force to replace it", line=lineno, field="split")
    out = split_rows(rows, items, by=by, holdout=holdout, seed=seed)
    write_atomic(output, _render(out, items.suffix.lower()))
    groups = {side: len({r[by] for r in out if r["split"] == side}) for side in ("dev", "holdout")}
    counts = Counter(r["split"] for r in out)
    Console().print(
        f"wrote {output}: dev {counts['dev']} rows ({groups['dev']} groups), holdout "
        f"{counts['holdout']} rows ({groups['holdout']} groups), by '{by}', seed {seed}",
        markup=False,
        highlight=False,
    )


def register(app: typer.Typer) -> None:
    app.command("split")(split_command)
