"""`juge split`: a dev/holdout split by group, written to a copy of a file of items or cases."""

from __future__ import annotations

import csv
import io
import json
from collections import Counter
from pathlib import Path
from typing import Any

from juge.data.results import SplitResult, SplitSide
from juge.errors import InputError, input_error


def split(
    items: str | Path,
    output: str | Path,
    *,
    by: str = "group",
    holdout: float = 0.5,
    seed: int = 0,
    force: bool = False,
) -> SplitResult:
    """Copy ``items`` (JSONL, CSV or TSV) to ``output`` in the same format with a ``split`` field, ``dev`` or
    ``holdout``, that keeps every value of the field ``by`` on one side (``juge split``). ``holdout`` is the
    share of groups (not rows) held out. The side of a group depends on its value and ``seed`` alone, so
    new rows never move an existing group. A row that already has a split is an error unless ``force``.

    >>> import juge
    >>> result = juge.split(juge.demo_path("items.jsonl"), "items.jsonl", by="question_id", holdout=0.3, force=True)
    >>> result.dev.groups, result.holdout.groups  # the sample's 80 questions, each wholly on one side
    (51, 29)
    """
    from juge.data.readers import read_rows
    from juge.files import write_atomic

    items, output = Path(items), Path(output)
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
                raise input_error(
                    items,
                    "already has a split; replace it with --force (force=True from Python)",
                    line=lineno,
                    field="split",
                )
    out = split_rows(rows, items, by=by, holdout=holdout, seed=seed)
    write_atomic(output, render(out, items.suffix.lower()))
    counts = Counter(r["split"] for r in out)
    groups = {side: len({str(r[by]) for r in out if r["split"] == side}) for side in ("dev", "holdout")}
    return SplitResult(
        source=str(items),
        path=str(output),
        by=by,
        holdout_share=holdout,
        seed=seed,
        dev=SplitSide(rows=counts["dev"], groups=groups["dev"]),
        holdout=SplitSide(rows=counts["holdout"], groups=groups["holdout"]),
    )


def split_rows(
    rows: list[tuple[int, dict[str, Any]]], path: Path, *, by: str, holdout: float, seed: int
) -> list[dict[str, Any]]:
    """The rows with a `split` field (dev/holdout) that keeps every value of `by` on one side."""
    from juge.data.readers import split_of

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


def render(rows: list[dict[str, Any]], suffix: str) -> str:
    """The rows as the text of a file with this suffix (CSV, TSV, else JSONL)."""
    if suffix in {".csv", ".tsv"}:
        buf = io.StringIO()
        writer = csv.DictWriter(
            buf, fieldnames=list(dict.fromkeys(k for r in rows for k in r)), delimiter="\t" if suffix == ".tsv" else ","
        )
        writer.writeheader()
        writer.writerows(rows)
        return buf.getvalue()
    return "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows)
