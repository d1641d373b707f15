"""Stored runs as `juge runs` lists them: filtered by eval, status and recency, with progress."""

from __future__ import annotations

from typing import Any

from juge.runs.status import run_done_total
from juge.store import Store


def list_runs(
    store: Store, *, eval_name: str | None = None, status: str | None = None, last: int | None = None
) -> list[dict[str, Any]]:
    """Runs newest first; `eval_name` matches the eval's name or its file, `status` the run's status
    (running, done, ...), `last` keeps the newest N. A running run gets `done` and `total` judgments."""
    runs = store.list_runs()
    if eval_name is not None:
        runs = [r for r in runs if eval_name in (r["name"], (r["config"] or {}).get("eval_file"))]
    if status is not None:
        runs = [r for r in runs if r["status"] == status]
    if last is not None:
        runs = runs[:last]
    for r in runs:
        if r["status"] == "running" and not r["summary"]:
            r["done"], r["total"] = run_done_total(store, r)
    return runs


def run_row(r: dict[str, Any]) -> dict[str, Any]:
    """The figures `juge runs --json` writes for one run."""
    s = r["summary"] or {}
    return {
        "id": r["id"],
        "name": r["name"],
        "status": r["status"],
        "started_at": r["started_at"],
        "ended_at": r["ended_at"],
        "eval_file": (r["config"] or {}).get("eval_file"),
        "n_cases": s.get("n_cases"),
        "pass_rate": s.get("pass_rate"),
        "cases_passed": s.get("cases_passed"),
        "done": r.get("done"),
        "total": r.get("total"),
        "judges": (r["config"] or {}).get("judges", []),
        "dataset_hash": r["dataset_hash"],
        "juge_version": r["juge_version"],
    }
