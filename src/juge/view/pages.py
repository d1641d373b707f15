"""What each page of ``juge view`` shows, read from the store (a page at a time) and the opened result files.

Functions return plain data for the templates; the rules they rest on live where the commands read them
(`select_runs`/`run_row` for ``juge runs``, `compare_runs` for ``juge compare``, `combine_orders` for a
pair's verdict, the calibration's and the policy's results as written)."""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from juge.calibration.results import Calibration, Disagreement
from juge.engine import payer_of
from juge.errors import InputError
from juge.judges.pairwise import combine_orders
from juge.runs.listing import run_kind, run_row, select_runs
from juge.runs.select import PAIR_MEANING
from juge.store import Store
from juge.view.labels import RunLabels

OUTCOMES = ("ok", "unparsed", "refused", "error")
# A finished run's judgments do not change: their totals are counted once per viewer.
_TOTALS: dict[tuple[str, str], dict[str, Any]] = {}


def run_list(
    store: Store, *, eval: str = "", status: str = "", kind: str = "", since: str = "", until: str = ""
) -> tuple[list[Any], list[str]]:
    """The stored runs as ``juge runs --all`` lists them, kept by eval (name or file), status, kind and start
    date (``since``/``until``, YYYY-MM-DD, both ends kept); and every kind there is, for the filter."""
    stored = select_runs(store, eval_name=eval or None, status=status or None, all_kinds=True)
    kinds = sorted({run_kind(r["config"] or {}) for r in store.list_runs()})
    kept = [
        r
        for r in stored
        if (not kind or run_kind(r["config"] or {}) == kind)
        and (not since or r["started_at"][:10] >= since)
        and (not until or r["started_at"][:10] <= until)
    ]
    return [run_row(r) for r in kept], kinds


def verdict_values(verdict: str) -> list[Any]:
    """The stored verdicts a typed verdict matches: the word as written, or the number it spells."""
    values: list[Any] = [verdict]
    for kind in (int, float):
        try:
            values.append(kind(verdict))
            break
        except ValueError:
            continue
    return values


def run_page(
    store: Store, run_id: str, filters: Mapping[str, str], *, after: list[Any] | None, size: int, labels: RunLabels
) -> dict[str, Any]:
    """A run's summary, gate, versions, cost and tokens, and one page of its judgments under the filters."""
    run = store.get_run(run_id)
    config, summary = run["config"] or {}, run["summary"]
    if filters["outcome"] and filters["outcome"] not in OUTCOMES:
        raise InputError(f"outcome {filters['outcome']!r}: choose one of {', '.join(OUTCOMES)}")
    judges = _judges(store, run, summary)
    rows, resume = store.judgment_page(
        run["id"],
        after=after,
        limit=size + 1,
        outcome=filters["outcome"] or None,
        judge=filters["judge"] or None,
        verdicts=verdict_values(filters["verdict"]) if filters["verdict"] else (),
        category=filters["category"] or None,
        failed_check=filters["check"] or None,
    )
    more = len(rows) > size
    rows = rows[:size]
    if more:
        next_after: str | None = json.dumps([rows[-1][k] for k in ("item_id", "judge", "ord", "repeat")])
    else:  # a filter that matched little: go on after the last judgment read
        next_after = json.dumps(list(resume)) if resume is not None else None
    totals = _totals(store, run, summary)
    with_labels = bool(labels.projects(run["id"]) or labels.from_file)
    for row in rows:
        row["labels"] = labels.of(run["id"], row["item_id"]) if with_labels else []
    min_pass_rate = config.get("min_pass_rate")
    pass_rate = (summary or {}).get("pass_rate")
    gate = (
        {"min_pass_rate": min_pass_rate, "pass_rate": pass_rate, "passed": pass_rate >= min_pass_rate}
        if min_pass_rate is not None and pass_rate is not None
        else None
    )
    return {
        "run": run,
        "row": run_row(run),
        "config": config,
        "summary": summary,
        "judges": judges,
        "checks": sorted(((summary or {}).get("checks") or {}).items()),
        "gate": gate,
        "totals": totals,
        "rows": rows,
        "next_after": next_after,
        "searched_on": resume is not None,
        "with_labels": with_labels,
        "label_projects": labels.projects(run["id"]),
        "first_page": after is None,
        "outcomes": OUTCOMES,
    }


def _totals(store: Store, run: dict[str, Any], summary: dict[str, Any] | None) -> dict[str, Any]:
    """The run's judgments, tokens and judges' cost: from its summary, or (a summary stored before it held the
    tokens, or a run still running) counted in the store, once per viewer for a finished run."""
    cost = (summary or {}).get("cost") or {}
    if cost.get("judge_tokens_in") is not None:
        n = sum((j or {}).get("n") or 0 for j in ((summary or {}).get("judges") or {}).values())
        return {"n": n, "tokens_in": cost["judge_tokens_in"], "tokens_out": cost.get("judge_tokens_out"),
                "cost": cost.get("judges")}  # fmt: skip
    key = (str(store.path), run["id"])
    totals = _TOTALS.get(key) or store.judgment_totals(run["id"])
    if run["status"] == "done":
        _TOTALS[key] = totals
    return totals


def _judges(store: Store, run: dict[str, Any], summary: dict[str, Any] | None) -> list[dict[str, Any]]:
    """Per judge: its setup, the model versions as answered, template and hash, calls by outcome and verdict.

    From the stored summary; a run still running has none, and its judges are counted from the store."""
    configured = {j.get("name"): j for j in (run["config"] or {}).get("judges") or [] if isinstance(j, dict)}
    if summary and summary.get("judges"):
        return [
            {
                "name": name,
                "setup": j.get("setup") or configured.get(name, {}).get("setup"),
                "models": j.get("model") or [],
                "template": j.get("template"),
                "template_hash": j.get("template_hash"),
                "n": j.get("n"),
                "outcomes": j.get("outcomes") or {},
                "verdicts": j.get("verdicts") or {},
                "pair_verdicts": j.get("pair_verdicts"),
            }
            for name, j in summary["judges"].items()
        ]
    return [
        {
            "name": j["judge"],
            "setup": configured.get(j["judge"], {}).get("setup"),
            "models": j["models"],
            "template": j["template"],
            "template_hash": j["template_hash"],
            "n": j["n"],
            "outcomes": j["outcomes"],
            "verdicts": {},
            "pair_verdicts": None,
        }
        for j in store.judge_overview(run["id"])
    ]


def case_page(store: Store, run_id: str, item_id: str, labels: RunLabels) -> dict[str, Any]:
    """One case of a run: its fields, the system's outputs, checks, every judgment with its raw text (both
    orders of a pair and the verdict over both), the prompts as sent, and the people's labels if given."""
    run = store.get_run(run_id)
    case = store.run_case(run["id"], item_id)
    if case is None:
        raise InputError(f"run {run['id']} has no case {item_id!r}")
    judgments = store.case_judgments(run["id"], item_id)
    prompts: dict[tuple[str, str | None], list[dict[str, Any]]] = {}
    outputs = store.outputs(run["id"], [item_id])
    payers = [payer_of(item_id, j.judge, j.order or "", j.repeat) for j in judgments]
    payers += [payer_of(item_id, slot) for _, slot in outputs]
    for request in store.case_requests(run["id"], item_id, payers):
        meta = request.get("meta") or {}
        if str(meta.get("template", "")).endswith("/solve"):
            continue  # a solve-first call: the verdict call's prompt is the one shown
        prompts.setdefault((str(meta.get("judge")), meta.get("order")), request.get("messages") or [])
    groups: dict[tuple[str, int], list[Any]] = {}
    for j in judgments:
        groups.setdefault((j.judge, j.repeat), []).append(j)
    judged = []
    for (name, repeat), calls in groups.items():
        letters = {j.order: (str(j.verdict) if j.outcome == "ok" else None) for j in calls if j.order}
        combined = (combine_orders(letters.get("12"), letters.get("21")) or "missing") if letters else None
        judged.append(
            {
                "judge": name,
                "repeat": repeat,
                "calls": [{"j": j, "prompt": prompts.get((j.judge, j.order))} for j in calls],
                "pair_verdict": combined,
                "meaning": PAIR_MEANING.get(combined or "", ""),
            }
        )
    return {
        "run": run,
        "case": case,
        "fields": case.model_dump(exclude_none=True, exclude={"meta"}),
        "meta": case.meta,
        "checks": store.case_checks(run["id"], item_id),
        "outputs": sorted(outputs.values(), key=lambda o: o["slot"]),
        "judged": judged,
        "system_prompts": [m for (judge, _), m in prompts.items() if judge == "system"],
        "labels": labels.of(run["id"], item_id),
        "label_sources": [f"project {p}" for p in labels.projects(run["id"])] + ([labels.file] if labels.file else []),
    }


def compare_page(store: Store, run_a: str, run_b: str) -> dict[str, Any]:
    """``juge compare A B --allow-different-judges`` (flagged when the judges differ), with its prompt diffs."""
    from juge.runs.compare import compare_runs

    comparison = compare_runs(store, run_a, run_b, allow_different_judges=True)
    return {"c": comparison, "judge_diffs": (comparison.model_extra or {}).get("judge_diffs") or []}


def study_overview(calibration: Calibration) -> dict[str, Any]:
    """Per judge: its headline figures, its order flips and its figures per category, each with the number of
    disagreements behind it (the items a link opens)."""
    judges = []
    people = calibration.per_category or {}
    for key, figures in calibration.judges.items():
        rows = figures.disagreements
        by_category: dict[str, int] = {}
        for row in rows or []:
            by_category[row.category or ""] = by_category.get(row.category or "", 0) + 1
        judges.append(
            {
                "key": key,
                "f": figures,
                "has_items": rows is not None,
                "n_disagreements": len(rows or []),
                "n_order_dependent": sum(_order_dependent(r) for r in rows or []),
                "categories": [
                    {
                        "name": name,
                        "f": f,
                        "n_disagreements": by_category.get(name, 0),
                        # person vs person in the category: beside the judge's figures (grades), or the study's
                        "ceiling": f.ceiling or _people_ceiling(people, name),
                    }
                    for name, f in sorted((figures.per_category or {}).items())
                ],
            }
        )
    return {"c": calibration, "judges": judges}


def runs_holding(store: Store, item_ids: list[str], *, newest: int = 5) -> dict[str, list[str]]:
    """For each item, the newest runs of an eval (at most `newest`) that hold it as a case: where its raw answers
    and prompts can be read."""
    out: dict[str, list[str]] = {}
    runs = [r for r in store.list_runs() if run_kind(r["config"] or {}) == "eval"][:newest]
    for run in runs:
        for item in store.cases_in_run(run["id"], item_ids):
            out.setdefault(item, []).append(run["id"])
    return out


def _people_ceiling(people: Mapping[str, Any], category: str) -> Any:
    figures = people.get(category)
    return figures.ceiling if figures is not None else None


def _order_dependent(row: Disagreement) -> bool:
    """The judge's verdict changed with the order the answers were shown in (pairwise: `inconsistent`)."""
    return row.verdict == "inconsistent"


def study_disagreements(
    calibration: Calibration, *, judge: str, category: str, order_dependent: bool
) -> list[Disagreement]:
    """The items where `judge` and the people's majority disagree, in `category` (all when empty), only those
    whose verdict changed with the order when `order_dependent`."""
    if judge not in calibration.judges:
        raise InputError(f"judge {judge!r}: not in this calibration (judges: {', '.join(calibration.judges)})")
    rows = calibration.judges[judge].disagreements or []
    return [
        r
        for r in rows
        if (not category or (r.category or "") == category) and (not order_dependent or _order_dependent(r))
    ]
