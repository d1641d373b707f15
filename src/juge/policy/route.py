"""Apply a judge policy to one item: judge or person, the reason, and the verdict.

Order of the checks (item-level reasons first, so they are recorded even when the
item's category also goes to a person):

1. the item's category is not in the policy -> person: category not calibrated;
2. a judgment of the policy's template is refused, unparsed, an error, has no letter
   A/B/C, or an order is missing -> person: refused/unparsed/missing;
3. the two orders disagree -> person: order changed the verdict;
4. ``rule == "guarantee"``: confidence below the threshold -> person: low confidence (no threshold
   reached the target on dev -> person: no confidence threshold);
   otherwise: the category goes to a person -> person: category (too few items to decide in it on dev ->
   person: too few items to decide; :mod:`juge.policy.decision`);
5. else the judge decides, and its verdict stands.

A judgment from a model version or template hash the policy was not derived with is
an input error: the policy does not apply to it (recalibrate).
"""

from __future__ import annotations

import json
import random
from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from juge.calibration.pairtable import ORDERS
from juge.data.records import OUTCOMES, Case, Judgment
from juge.errors import InputError, input_error, validation_error
from juge.judges.pairwise import combine_orders
from juge.policy.confidence import missing_repeats, routed_confidence
from juge.policy.grades import route_grade_item
from juge.policy.results import PolicyResult, RouteResult
from juge.policy.routed import (
    JUDGE,
    LETTERS,
    PERSON,
    REASON_CONFIDENCE,
    REASON_MISSING,
    REASON_NO_THRESHOLD,
    REASON_ORDER,
    REASON_UNCALIBRATED,
    RouteDecision,
    category_route,
    check_versions,
    confidence_route,
)

# A policy as the model, or as its JSON (as derive_policy returns it): route_item reads either.
Policy = PolicyResult | Mapping[str, Any]


def route_item(policy: Policy, item_id: str, category: str | None, judgments: Iterable[Judgment]) -> RouteDecision:
    """Route one item with its recorded judgments (any judges; the policy picks its own template)."""
    policy = PolicyResult.of(policy)
    if policy.cascade is not None:
        return _route_cascade(policy, item_id, category, judgments)
    if policy.judge_kind != "pairwise":
        return route_grade_item(policy, item_id, category, judgments)
    category = category or "(none)"
    key = policy.templates_by_category.get(category)
    if key is None:
        return RouteDecision(
            item_id,
            category,
            PERSON,
            REASON_UNCALIBRATED,
            f"the policy has no dev figures for category {category!r}",
            None,
            None,
        )
    judgments = [j for j in judgments if j.item_id == item_id]
    calls = [j for j in judgments if f"{j.judge}/{j.template}" == key]
    if not calls:
        return RouteDecision(
            item_id, category, PERSON, REASON_MISSING, _no_policy_judgment(policy, key, judgments), None, key
        )
    check_versions(policy, key, calls)
    first = {o: min((j for j in calls if j.order == o), key=lambda j: j.repeat, default=None) for o in ORDERS}
    problems = [f"order {o}: {_call_problem(j)}" for o, j in first.items() if _call_problem(j)]
    if problems:
        return RouteDecision(item_id, category, PERSON, REASON_MISSING, "; ".join(problems), None, key)
    verdict = combine_orders(first["12"].verdict, first["21"].verdict)  # type: ignore[union-attr, arg-type]
    if verdict == "inconsistent":
        return RouteDecision(
            item_id,
            category,
            PERSON,
            REASON_ORDER,
            f"order 12 wrote {first['12'].verdict}, order 21 wrote {first['21'].verdict}",  # type: ignore[union-attr]
            verdict,
            key,
        )
    if policy.rule == "guarantee":
        g = policy.guarantee
        short = missing_repeats(calls, None if g is None else g.repeats)
        if short:
            return RouteDecision(item_id, category, PERSON, REASON_MISSING, short, verdict, key)
        threshold = None if g is None else g.threshold
        return confidence_route(
            item_id, category, verdict, key, routed_confidence(policy, verdict, calls, judgments), threshold
        )
    decided = policy.decision(category)
    assert decided is not None  # templates_by_category and categories name the same categories
    route, why = category_route(decided)
    return RouteDecision(item_id, category, route, why, f"{category}: {decided.reason}", verdict, key)


def _route_cascade(
    policy: PolicyResult, item_id: str, category: str | None, judgments: Iterable[Judgment]
) -> RouteDecision:
    """The stages in order, each a one-judge policy (rules 3 and 4) with its confidence threshold; the first
    that may decide the item decides it, else a person, with every stage's reason."""
    from juge.policy.cascade import stage_policy
    from juge.policy.configurations import stage_may_decide

    assert policy.cascade is not None
    judgments = [j for j in judgments if j.item_id == item_id]
    reasons: list[str] = []
    last: RouteDecision | None = None
    for k, stage in enumerate(policy.cascade.stages, 1):
        threshold = None if stage.guarantee is None else stage.guarantee.threshold
        decided = stage_policy(policy, stage).decision(category or "(none)")
        if not stage_may_decide(stage, category or "(none)"):  # the stage is not called: say why, not "missing"
            if decided is None:
                why, detail = REASON_UNCALIBRATED, f"no dev figures for category {category!r}"
            elif decided.route != JUDGE:
                why, detail = category_route(decided)[1], decided.reason
            else:
                why, detail = REASON_NO_THRESHOLD, "no confidence threshold met the target on dev"
            last = RouteDecision(item_id, category or "(none)", PERSON, why, detail, None, None)
            reasons.append(f"stage {k} ({stage.name}): {detail}")
            continue
        d = route_item(stage_policy(policy, stage), item_id, category, judgments)
        mine = _calls_of(judgments, d.template)
        needed = None if stage.guarantee is None else stage.guarantee.repeats
        short = missing_repeats(mine, needed) if d.route == JUDGE else None
        if short:  # fewer calls than the dev confidence read: not comparable with the threshold
            d = RouteDecision(
                item_id, d.category, PERSON, REASON_MISSING, short, d.verdict, d.template, passes=d.passes
            )
        if d.route == JUDGE:
            conf = routed_confidence(policy, d.verdict, mine, judgments)
            if threshold is not None and conf >= threshold:
                return RouteDecision(
                    item_id, d.category, JUDGE, f"stage {k}",
                    f"stage {k} ({stage.name}): confidence {conf:.3f} >= {threshold:.3f}", d.verdict, d.template,
                    conf, passes=d.passes, stage=k,
                )  # fmt: skip
            why = REASON_NO_THRESHOLD if threshold is None else REASON_CONFIDENCE
            detail = (
                "no threshold met the target on dev"
                if threshold is None
                else f"confidence {conf:.3f} < {threshold:.3f}"
            )
            d = RouteDecision(item_id, d.category, PERSON, why, detail, d.verdict, d.template, conf, passes=d.passes)
        reasons.append(f"stage {k} ({stage.name}): {d.detail}")
        last = d
    assert last is not None
    return RouteDecision(
        item_id, last.category, PERSON, last.reason, "; ".join(reasons), last.verdict, last.template, last.confidence
    )


def _calls_of(judgments: Iterable[Judgment], key: str | None) -> list[Judgment]:
    return [j for j in judgments if f"{j.judge}/{j.template}" == key]


def _call_problem(j: Judgment | None) -> str | None:
    """Why one order's call gives no letter (no call, not ok, or no letter A/B/C), or None when it does."""
    if j is None:
        return "no judgment"
    if j.outcome != "ok":
        return j.outcome
    if j.verdict not in LETTERS:
        return "outcome ok but no letter" if j.verdict is None else f"letter {j.verdict!r} is not A, B or C"
    return None


def _no_policy_judgment(policy: PolicyResult, key: str, judgments: Sequence[Judgment]) -> str:
    """Why an item without a call of the policy's judge and template cannot be judged: name both."""
    info = policy.judges.get(key)
    judge, template = (key, "?") if info is None else (info.judge or key, info.template or "?")
    wanted = f"judge {judge!r} with template {template!r}"
    present = sorted({f"{j.judge!r} with template {j.template!r}" for j in judgments})
    found = f"it was judged only by {', '.join(present)}" if present else "it carries no judgment at all"
    return f"no judgment from the policy's {wanted}: {found}; run that judge on it, or a person decides"


def route_cases(policy: Policy, cases: Sequence[Case], judgments: Iterable[Judgment]) -> list[RouteDecision]:
    """``route_item`` for every case."""
    policy = PolicyResult.of(policy)  # once, not per item
    by_item: dict[str, list[Judgment]] = {}
    for j in judgments:
        by_item.setdefault(j.item_id, []).append(j)
    return [route_item(policy, c.id, c.category, by_item.get(c.id, [])) for c in cases]


def weekly_seed(today: date | None = None) -> int:
    """The default audit seed: the ISO year and week (e.g. 202648), so each week draws a new sample."""
    year, week, _ = (today or date.today()).isocalendar()
    return year * 100 + week


def audit_sample(
    policy: Policy, cases: Sequence[Case], judgments: Sequence[Judgment], *, n: int, seed: int
) -> list[dict[str, Any]]:
    """``n`` random decisions the judge made alone (seeded), with the item (its context too) and the judge's raw
    texts: by order for a pair (``answer_1``, ``answer_2``), as ``text`` for a PASS/FAIL or score judge (``answer``)."""
    policy = PolicyResult.of(policy)
    pairwise = policy.judge_kind == "pairwise"
    decisions = route_cases(policy, cases, judgments)
    by_id = {c.id: c for c in cases}
    judged = [d for d in decisions if d.route == JUDGE]
    chosen = random.Random(seed).sample(judged, min(n, len(judged)))
    out = []
    for d in chosen:
        case = by_id[d.item_id]
        texts: dict[str | None, str] = {
            j.order: j.text
            for j in judgments
            if j.item_id == d.item_id and f"{j.judge}/{j.template}" == d.template and j.repeat == 0
        }
        answers = {"answer_1": case.output_1, "answer_2": case.output_2} if pairwise else {"answer": case.output}
        out.append(
            {
                **d.to_dict(),
                "question": case.question,
                "context": case.context,
                **answers,
                "reference": case.reference,
                "judge_texts": {o: texts.get(o) for o in ORDERS} if pairwise else {"text": texts.get(None)},
            }
        )
    return out


def read_route_item(path: Path) -> tuple[Case, list[Judgment]]:
    """One new item as a JSON object (the shared sample's item layout) with its judge calls under ``judgments``.

    Item fields: ``item_id`` (or ``id``), ``category``, ``question``, ``answer_1``, ``answer_2``,
    optional ``reference``. Each call: ``judge``, ``model``, ``prompt`` (or ``template``), ``order``,
    ``letter`` (or ``verdict``), ``outcome``, ``text``, optional ``template_hash``, ``repeat``,
    ``distribution``. The judgments may instead come from a separate file (``--judgments``).
    """
    if not path.exists():
        raise InputError(f"{path}: file not found")
    text = path.read_text(encoding="utf-8-sig")
    try:
        row = json.loads(text)
    except json.JSONDecodeError as exc:
        raise input_error(path, f"not valid JSON: {exc.msg} (column {exc.colno})", line=exc.lineno) from None
    if not isinstance(row, dict):
        raise input_error(path, f"expected one JSON object (the item), got {type(row).__name__}")
    item_id = row.get("item_id", row.get("id"))
    if item_id in (None, ""):
        raise input_error(path, "required field is missing", field="item_id")
    try:
        case = Case(
            id=str(item_id),
            category=row.get("category"),
            question=row.get("question"),
            output=row.get("output", row.get("answer")),
            output_1=row.get("answer_1", row.get("output_1")),
            output_2=row.get("answer_2", row.get("output_2")),
            reference=row.get("reference"),
        )
    except ValidationError as exc:
        raise validation_error(path, exc) from None
    calls = row.get("judgments") or []
    if not isinstance(calls, list):
        raise input_error(path, "must be a list of judge calls", field="judgments")
    judgments = []
    for k, call in enumerate(calls):
        where = f"judgments[{k}]"
        if not isinstance(call, dict):
            raise input_error(path, "must be an object", field=where)
        _check_call(path, where, call)
        try:
            judgments.append(
                Judgment.model_validate(
                    {
                        "item_id": case.id,
                        "judge": call.get("judge"),
                        "model": call.get("model") or "unknown",
                        "template": call.get("prompt", call.get("template")),
                        "template_hash": call.get("template_hash") or "",
                        "order": None if call.get("order") is None else str(call["order"]),
                        "repeat": call.get("repeat") or 0,
                        "text": call.get("text") or "",
                        "verdict": call.get("letter", call.get("verdict")),
                        "outcome": call.get("outcome"),
                        "distribution": call.get("distribution"),
                    }
                )
            )
        except ValidationError as exc:
            raise validation_error(path, exc, prefix=where) from None
    return case, judgments


def route_recorded_item(
    policy: PolicyResult, item: Path, judgments: Path | None = None, *, force: bool = False, source: str = "policy"
) -> RouteResult:
    """Route one item with its recorded judge calls (under ``judgments`` in the item file, or in a separate
    JSONL file). An item with no call at all goes to a person, and a note says how to give its calls. Calls
    from another judge identity than the policy's are refused unless ``force`` (then FORCED, in ``identity``)."""
    from juge.data.adapters import read_recorded_judgments
    from juge.policy.identity import accept_identity, check_policy_calls, merge_use

    case, calls = read_route_item(item)
    if judgments is not None:
        calls += [j for j in read_recorded_judgments(judgments) if j.item_id == case.id]
    use = check_policy_calls(policy, calls, force=force, command="juge route", source=source)
    decision = route_item(accept_identity(policy, use), case.id, case.category, calls)
    notes = []
    if not calls:
        where = (
            f"--judgments {judgments} has no call for item {case.id!r} and {item} carries none"
            if judgments is not None
            else f'{item} carries no judge calls (no "judgments" list) and no --judgments file was given'
        )
        notes.append(
            f"{where}, so there is no verdict and the item goes to a person: give its recorded calls with "
            "--judgments FILE, or --eval EVAL_FILE to call the policy's judge on it"
        )
    forced, warning = merge_use(False, None, use)
    return RouteResult.model_validate(
        {
            "policy_hash": policy.policy_hash,
            "decisions": [decision.to_dict()],
            "notes": notes,
            "identity": use.to_dict(),
            "forced": forced,
            "warning": warning,
        }
    )


def _check_call(path: Path, where: str, call: dict[str, Any]) -> None:
    """The checks of ``juge.data.adapters.read_recorded_judgments`` on one call of an item file."""
    outcome, order = call.get("outcome"), call.get("order")
    letter_field = "letter" if "letter" in call else "verdict"
    letter = call.get(letter_field)
    if outcome not in OUTCOMES:
        raise input_error(path, f"outcome {outcome!r} is not one of {list(OUTCOMES)}", field=f"{where}.outcome")
    if order is not None and str(order) not in ORDERS:
        raise input_error(path, f"order {order!r} is not '12' or '21'", field=f"{where}.order")
    if order is not None and letter is not None and letter not in LETTERS:
        raise input_error(path, f"letter {letter!r} is not A, B or C", field=f"{where}.{letter_field}")
    if outcome != "ok" and letter is not None:
        raise input_error(
            path, f"a call with outcome {outcome!r} cannot carry a verdict", field=f"{where}.{letter_field}"
        )
    if outcome == "ok" and letter is None:
        raise input_error(path, "outcome is 'ok' but there is no letter/verdict", field=f"{where}.{letter_field}")
