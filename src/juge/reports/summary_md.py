"""A short Markdown summary of a run for a pull-request comment (``juge report --format md-summary``): the answer
(the pass rate with its interval and n), the gate, and the cases whose verdict changed since a baseline run (the
previous finished run of the same eval in the store, or OLD of ``--compare OLD NEW``)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from juge.reports.render import fmt_estimate, md_text
from juge.reports.runs import build_run_data
from juge.runs.gate import evaluate_gate
from juge.runs.results import Gate, RunSummary
from juge.runs.verdicts import run_outcomes, run_threshold
from juge.store import Store

MAX_CHANGED = 15  # rows of changed cases shown; the rest are counted


def previous_run(store: Store, run: dict[str, Any]) -> str | None:
    """The latest finished run of the same eval (same eval file, else same name) started before `run`."""
    config = run["config"] or {}
    same = [
        r
        for r in store.list_runs()
        if r["id"] != run["id"]
        and r["status"] == "done"
        and r["started_at"] < run["started_at"]
        and (r["config"] or {}).get("kind", "eval") == config.get("kind", "eval")
        and (
            (r["config"] or {}).get("eval_file") == config.get("eval_file")
            if config.get("eval_file")
            else r["name"] == run["name"]
        )
    ]
    return max(same, key=lambda r: r["started_at"])["id"] if same else None


def _outcomes(store: Store, run: dict[str, Any]) -> dict[str, str]:
    outcomes, _ = run_outcomes(
        store.run_cases(run["id"]),
        store.judgments(run["id"]),
        store.check_results(run["id"]),
        run["config"],
        threshold=run_threshold(run["config"]),
    )
    return {item: o.verdict for item, o in outcomes.items()}


def _gate_lines(gate: Gate | None, error: str | None) -> list[str]:
    if error is not None:
        return [f"**Gate:** could not be worked out again: {md_text(error)}"]
    if gate is None:
        return ["**Gate:** none set (`[gate] min_pass_rate` or `min_pass_rate_lower` in the eval file)"]
    lines = []
    if gate.min_pass_rate is not None:
        ok = gate.pass_rate >= gate.min_pass_rate
        lines.append(
            f"- {'✅' if ok else '❌'} pass rate {gate.pass_rate:.1%} {'≥' if ok else '<'} "
            f"`min_pass_rate` {gate.min_pass_rate:.1%}"
        )
    if gate.min_pass_rate_lower is not None:
        low = gate.pass_rate_lower
        ok = low is not None and low >= gate.min_pass_rate_lower
        shown = "n/a" if low is None else f"{low:.1%}"
        source = f"PPI++ with {gate.n_labelled} labelled cases" if gate.lower_from == "ppi" else "exact interval"
        lines.append(
            f"- {'✅' if ok else '❌'} 95 % lower bound {shown} ({source}) {'≥' if ok else '<'} "
            f"`min_pass_rate_lower` {gate.min_pass_rate_lower:.1%}"
        )
    head = "**Gate: passed**" if gate.passed else "**Gate: FAILED** (`juge run` exits 1)"
    return [head, *lines]


def md_summary(store: Store, run_id: str, *, db: str | Path | None = None, baseline: str | None = None) -> str:
    """The summary of run `run_id` against `baseline` (a run id; default: the previous run of the same eval)."""
    from juge.errors import InputError

    data = build_run_data(store, run_id, max_cases=0)
    run = store.get_run(data["run"]["id"])
    summary = RunSummary.model_validate(data["summary"])
    gate, gate_error = None, None
    record = (run["config"] or {}).get("gate")
    if isinstance(record, dict):
        try:
            gate = evaluate_gate(record, summary, db=db)
        except InputError as exc:  # e.g. the labels file is gone since the run
            gate_error = str(exc)
    name = md_text(run["name"] or run["id"])
    verdict = "" if gate is None else (" — ✅ gate passed" if gate.passed else " — ❌ gate failed")
    lines = [f"### juge: {name}{verdict}", ""]
    rate = data.get("pass_rate")
    if rate is not None:
        lines.append(
            f"**Pass rate {fmt_estimate(rate, 'rate')}** (95 % exact interval, n = cases): "
            f"{data['cases_passed']} passed, {data['cases_failed']} failed, "
            f"{data['cases_missing']} without a verdict (never a pass)."
        )
    else:
        lines.append("No check or counted judge passes or fails a case in this run (no pass rate).")
    lines += ["", *_gate_lines(gate, gate_error), ""]
    base_id = baseline or previous_run(store, run)
    if base_id is None:
        lines.append("No earlier run of this eval in the store to compare with.")
    else:
        base = store.get_run(base_id)
        before, now = _outcomes(store, base), _outcomes(store, run)
        changed = sorted(i for i in now.keys() & before.keys() if now[i] != before[i])
        worse = sum(now[i] != "pass" and before[i] == "pass" for i in changed)
        added, gone = len(now.keys() - before.keys()), len(before.keys() - now.keys())
        extra = "".join(f", {k} {what}" for k, what in ((added, "cases new"), (gone, "cases gone")) if k)
        lines.append(f"**Changed since run `{base['id']}`:** {len(changed)} cases ({worse} no longer pass){extra}.")
        if changed:
            lines += ["", "| case | before | now |", "| --- | --- | --- |"]
            lines += [f"| {md_text(i)} | {before[i]} | {now[i]} |" for i in changed[:MAX_CHANGED]]
            if len(changed) > MAX_CHANGED:
                lines.append(
                    f"\n… and {len(changed) - MAX_CHANGED} more (`juge report --compare {base['id']} {run['id']}`)."
                )
    lines += ["", f"<sub>run `{run['id']}`, data {str(run['dataset_hash'])[:12]}, juge {run['juge_version']}</sub>", ""]
    return "\n".join(lines)
