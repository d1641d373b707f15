"""A run as rows for analysis: one row per judgment (`judgment_rows`), flattened to one column per
field with native types (`tidy`), or one row per case (`wide_rows`).

Tidy columns: the verdict as a plain word or number (`verdict`), numeric verdicts again in `score`,
one column per criterion (`criterion.NAME`), per distribution entry (`p.ANSWER`), per check
(`check.NAME` true/false, `check.NAME.reason`), and the case's fields joined in (`category`,
`question`, `group`, `split`, `meta.KEY`, nested keys joined with dots).

`export` writes them as JSONL, CSV or Parquet (``juge export``).
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.data.records import Case
from juge.errors import InputError
from juge.runs.results import ExportResult

if TYPE_CHECKING:  # imported where used: `import juge` stays cheap
    from juge.runs.results import Run
    from juge.store import Store

FORMATS = ("jsonl", "csv", "parquet")
FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def export(
    run: str | Run,
    path: str | Path,
    *,
    db: str | Path | None = None,
    format: Literal["jsonl", "csv", "parquet", "inspect", "promptfoo", "otel"] | None = None,
    wide: bool = False,
    raw_csv: bool = False,
    route: str | Path | None = None,
) -> ExportResult:
    """Write a stored run for analysis (``juge export``): one row per judgment, or with ``wide`` one row per
    case (a column per judge's verdict). ``format`` defaults to the path's suffix (``.jsonl``, ``.csv``,
    ``.parquet``; Parquet needs ``juge[parquet]``).

    ``format`` ``inspect``, ``promptfoo`` or ``otel`` writes the run for other tools (``juge.runs.interop``): an
    Inspect AI eval log, a promptfoo results file, or OTLP JSON spans carrying each judgment as a
    ``gen_ai.evaluation.result`` event in the trace its case came from; ``route`` (a ``juge route --json`` file)
    adds the policy's decision to each span (otel only). The result's ``lost`` says what the format cannot carry.

    CSV and Parquet have one column per field with native types (see this module); JSONL keeps checks,
    distributions and meta nested. JSONL and Parquet keep every text exactly as stored; in CSV a text
    that starts like a spreadsheet formula is prefixed with a quote so opening the file cannot run it
    (``raw_csv`` turns this off). The file is written whole or not at all. Returns what was written.

    >>> import juge
    >>> juge.export("a1b2c3", "run.csv", db="juge.db").columns[:3]  # doctest: +SKIP
    ['run_id', 'item_id', 'category']
    """
    from juge.files import write_atomic, write_with
    from juge.runs.interop import INTEROP_FORMATS
    from juge.store import open_store

    path = Path(path)
    fmt = format or path.suffix.lower().lstrip(".")
    if fmt not in FORMATS + INTEROP_FORMATS:
        if format is None:
            raise InputError(
                f"{path}: unknown format {path.suffix!r}; use .jsonl, .csv or .parquet, or --format inspect|promptfoo|otel"
            )
        raise InputError(f"--format {format!r}: use one of {', '.join(FORMATS + INTEROP_FORMATS)}")
    if route is not None and fmt != "otel":
        raise InputError("--route adds the policy's decisions to OTel spans: use it with --format otel")
    if fmt in INTEROP_FORMATS:
        if wide:
            raise InputError(f"--wide is a table's shape: --format {fmt} has its own")
        return _export_interop(run, path, fmt, db=db, route=route)
    run_id = run if isinstance(run, str) else run.run_id
    with open_store(db, must_exist=True) as store:
        run_id = store.get_run(run_id)["id"]
        rows = judgment_rows(store, run_id)
    if wide:
        rows = wide_rows(rows)
    if fmt == "jsonl":
        columns = columns_of(rows)
        write_atomic(path, "".join(json.dumps(r, ensure_ascii=False, default=str) + "\n" for r in rows))
    else:
        flat = rows if wide else [tidy(r) for r in rows]
        columns = columns_of(flat)
        if fmt == "csv":
            buf = io.StringIO()
            writer = csv.DictWriter(buf, fieldnames=columns)
            writer.writeheader()
            writer.writerows(flat if raw_csv else [{k: spreadsheet_safe(v) for k, v in r.items()} for r in flat])
            write_atomic(path, buf.getvalue())
        else:
            try:
                import pyarrow as pa
                import pyarrow.parquet as pq
            except ImportError:
                raise InputError("parquet export needs pyarrow: pip install 'juge[parquet]'") from None
            table = pa.Table.from_pylist(one_type_per_column([{c: r.get(c) for c in columns} for r in flat]))
            write_with(path, lambda tmp: pq.write_table(table, tmp))
    return ExportResult(
        run_id=run_id,
        path=str(path),
        format=fmt,  # type: ignore[arg-type]  # checked against FORMATS above
        wide=wide,
        rows=len(rows),
        columns=columns,
    )


def _export_interop(
    run: str | Run, path: Path, fmt: str, *, db: str | Path | None, route: str | Path | None
) -> ExportResult:
    from juge.files import write_atomic
    from juge.runs.interop import interop_document, read_route
    from juge.store import open_store

    decisions = read_route(route) if route is not None else None
    run_id = run if isinstance(run, str) else run.run_id
    with open_store(db, must_exist=True) as store:
        run_id = store.get_run(run_id)["id"]
        rows = judgment_rows(store, run_id)
        document, written, lost, linked = interop_document(store, run_id, fmt, rows, route=decisions)
    write_atomic(path, json.dumps(document, ensure_ascii=False, indent=1) + "\n")
    return ExportResult(
        run_id=run_id,
        path=str(path),
        format=fmt,  # type: ignore[arg-type]  # one of INTEROP_FORMATS
        rows=written,
        lost=lost,
        linked=linked,
        decisions=len(decisions["decisions"]) if decisions is not None else None,
    )


def spreadsheet_safe(value: Any) -> Any:
    """A text cell a spreadsheet would evaluate (``=HYPERLINK(...)``, ``@SUM``) prefixed with ``'``
    (OWASP, "CSV Injection"); other values unchanged."""
    return "'" + value if isinstance(value, str) and value.startswith(FORMULA_STARTS) else value


# The case fields every row carries beside its answers (messages stay out: a list, not a column).
EXPORTED_CASE_FIELDS = ("category", "question", "context", "source", "reference", "group", "split")


def _flatten(prefix: str, value: Any, out: dict[str, Any]) -> None:
    """Nested mappings as dotted keys; lists (no fixed columns) as JSON text."""
    if isinstance(value, Mapping):
        for k, v in value.items():
            _flatten(f"{prefix}.{k}", v, out)
    elif isinstance(value, (list, tuple)):
        out[prefix] = json.dumps(value, ensure_ascii=False)
    else:
        out[prefix] = value


def case_columns(case: Case | None) -> dict[str, Any]:
    """The case fields every row carries (its `meta` is flattened by `tidy`)."""
    return {name: getattr(case, name) if case is not None else None for name in EXPORTED_CASE_FIELDS}


def judgment_rows(store: Store, run_id: str) -> list[dict[str, Any]]:
    """One row per judgment with the case's fields and checks; cases without judgments get one row."""
    run = store.get_run(run_id)
    cases = {c.id: c for c in store.run_cases(run["id"])}
    checks = store.check_results(run["id"])
    outputs = store.outputs(run["id"])
    rows = []
    judged = set()

    def answers(item_id: str) -> dict[str, Any]:
        """The output(s) under test: generated by the system, else as the case file gave them."""
        case = cases.get(item_id)
        generated = (outputs.get((item_id, "output")) or {}).get("text")
        if case is not None and case.is_pair:
            return {"output_1": case.output_1, "output_2": case.output_2}
        return {"output": generated if generated is not None else (case.output if case else None)}

    def case_checks(item_id: str) -> dict[str, Any]:
        return {k: {"passed": ok, "reason": why} for k, (ok, why) in checks.get(item_id, {}).items()}

    for j in store.judgments(run["id"]):
        judged.add(j.item_id)
        case = cases.get(j.item_id)
        rows.append(
            {
                "run_id": run["id"],
                "item_id": j.item_id,
                **case_columns(case),
                "meta": case.meta if case else {},
                "judge": j.judge,
                "model": j.model,
                "template": j.template,
                "template_hash": j.template_hash,
                "order": j.order,
                "repeat": j.repeat,
                "outcome": j.outcome,
                "verdict": j.verdict,
                "reason": j.reason,
                "text": j.text,
                **answers(j.item_id),
                "tokens_in": j.tokens_in,
                "tokens_out": j.tokens_out,
                "cost": j.cost,
                "latency": j.latency,
                "attempts": j.attempts,
                "timestamp": j.timestamp.isoformat(),
                "distribution": j.distribution,
                "checks": case_checks(j.item_id),
                "dataset_hash": run["dataset_hash"],
            }
        )
    for item_id, case in cases.items():
        if item_id not in judged:
            rows.append(
                {
                    "run_id": run["id"],
                    "item_id": item_id,
                    **case_columns(case),
                    "meta": case.meta,
                    "judge": None,
                    **answers(item_id),
                    "checks": case_checks(item_id),
                    "dataset_hash": run["dataset_hash"],
                }
            )
    return rows


def _is_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool)


def tidy(row: Mapping[str, Any]) -> dict[str, Any]:
    """One judgment row with one column per field, each a plain string, number or boolean."""
    out: dict[str, Any] = {}
    for key, value in row.items():
        if key == "verdict":
            if isinstance(value, Mapping):  # a criteria judge: one column per criterion
                out["verdict"] = None
                out["score"] = None
                for name, score in value.items():
                    out[f"criterion.{name}"] = score
            else:
                out["verdict"] = value
                out["score"] = value if _is_number(value) else None
        elif key == "checks":
            for name, result in (value or {}).items():
                out[f"check.{name}"] = result["passed"]
                out[f"check.{name}.reason"] = result["reason"]
        elif key == "distribution":
            for answer, p in (value or {}).items():
                out[f"p.{answer}"] = p
        elif key == "meta":
            _flatten("meta", value or {}, out)
        else:
            out[key] = value
    return out


def columns_of(rows: list[dict[str, Any]]) -> list[str]:
    return list(dict.fromkeys(k for r in rows for k in r))


def one_type_per_column(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Rows whose every column holds one type (what Parquet needs): a column mixing numbers with
    text (a PASS/FAIL judge and a score judge in one run) holds text; bools stay bools."""
    kinds: dict[str, set[str]] = {}
    for r in rows:
        for k, v in r.items():
            if v is not None:
                kinds.setdefault(k, set()).add("bool" if isinstance(v, bool) else "number" if _is_number(v) else "text")
    mixed = {k for k, types in kinds.items() if len(types) > 1}
    if not mixed:
        return rows
    return [{k: (str(v) if k in mixed and v is not None else v) for k, v in r.items()} for r in rows]


def wide_rows(rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per case: its fields, outputs and checks, then per judge (and repeat) the verdict and
    outcome; a pairwise judge's verdict is the combined one over both orders (`JUDGE.verdict`), each
    order's letter beside it (`JUDGE.12`, `JUDGE.21`)."""
    from juge.judges.pairwise import combine_orders

    by_case: dict[str, dict[str, Any]] = {}
    letters: dict[tuple[str, str], dict[str, Any]] = {}
    for row in rows:
        item = row["item_id"]
        wide = by_case.setdefault(item, {})
        if not wide:
            base = tidy({k: v for k, v in row.items() if k in _CASE_KEYS})
            wide.update(base)
        judge = row.get("judge")
        if judge is None:
            continue
        name = judge + (f".r{row['repeat']}" if row.get("repeat") else "")
        verdict = row["verdict"] if row["outcome"] == "ok" else None
        if row.get("order"):
            wide[f"{name}.{row['order']}"] = verdict
            wide[f"{name}.{row['order']}.outcome"] = row["outcome"]
            letters.setdefault((item, name), {})[row["order"]] = verdict
            continue
        wide[f"{name}.outcome"] = row["outcome"]
        if isinstance(verdict, Mapping):
            for criterion, score in verdict.items():
                wide[f"{name}.{criterion}"] = score
        else:
            wide[f"{name}.verdict"] = verdict
    for (item, name), by_order in letters.items():
        by_case[item][f"{name}.verdict"] = combine_orders(by_order.get("12"), by_order.get("21")) or "missing"
    return list(by_case.values())


_CASE_KEYS = (
    "run_id",
    "item_id",
    *EXPORTED_CASE_FIELDS,
    "meta",
    "output",
    "output_1",
    "output_2",
    "checks",
    "dataset_hash",
)
