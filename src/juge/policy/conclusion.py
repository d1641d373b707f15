"""Does a dev decision stand on holdout: each category's conclusion, the whole policy's, and the gap against
the margin as printed. Pairwise and grade holdout tests both read these."""

from __future__ import annotations

from typing import Any

from juge.policy.decision import CategoryDecision
from juge.policy.file import DIGITS, r3
from juge.policy.routed import JUDGE


def gap_conclusion(
    dev: CategoryDecision | None, dev_gap: float | None, holdout_row: dict[str, Any], *, rule: str
) -> dict[str, Any]:
    """Does one category's dev decision stand on holdout? ``holdout_row`` is the category's figures measured
    on holdout exactly as on dev; its ``by_figures`` is what holdout's figures alone say (a thin holdout is
    still a test of the figures: the shortage of items is dev's rule, not the test's)."""
    figures, reason = holdout_row["by_figures"], holdout_row["reason"]
    out = {
        "dev_decision": dev.route if dev else "person",
        "dev_gap": dev_gap,
        "holdout_gap": holdout_row.get("gap"),
        "holdout_decision": figures,
        "holdout_reason": reason,
    }
    if dev is None:
        out["held"] = True
        out["reason"] = "not in the policy (no dev figures): a person decides"
    elif dev.route != JUDGE:
        out["held"] = True
        out["reason"] = "a person decides: the dev decision stands (holdout: " + reason + ")"
    elif holdout_row.get("gap") is None and rule != "lower-bound":
        out["held"] = None
        out["reason"] = "untested: no judge-vs-person or person-vs-person figure on holdout"
    elif figures == JUDGE:
        out["held"] = True
        out["reason"] = "held: " + reason
    else:
        out["held"] = False
        out["reason"] = "NOT HELD: " + reason.replace("more than", "now beyond").replace("not above", "now not above")
    return out


def overall_conclusion(per_category: dict[str, dict[str, Any]], overall_gap: dict[str, Any] | None) -> dict:
    """Held when every category the judge decides held and, when given, the gap on all judged items too."""
    failed = [c for c, r in per_category.items() if r["held"] is False]
    untested = [c for c, r in per_category.items() if r["held"] is None]
    gap_failed = overall_gap is not None and overall_gap.get("within_margin") is False
    if failed or gap_failed:
        parts = [f"not held in {', '.join(failed)}"] if failed else []
        if gap_failed:
            parts.append(f"on all judged items {overall_gap['reason']}")  # type: ignore[index]
        return {"held": False, "reason": "NOT HELD: " + "; ".join(parts)}
    judged = [c for c, r in per_category.items() if r["dev_decision"] == JUDGE]
    if not judged:
        return {"held": True, "reason": "held: the policy lets the judge decide no category alone"}
    reason = f"held in every category the judge decides ({', '.join(judged)})"
    if untested:
        reason += f"; untested in {', '.join(untested)} (no figure on holdout)"
    if overall_gap is not None and overall_gap.get("reason"):
        reason += f"; on all judged items {overall_gap['reason']}"
    return {"held": True, "reason": "held: " + reason}


def margin_gap(jp: dict[str, Any], pp: dict[str, Any], margin: float) -> dict[str, Any]:
    """judge vs person minus person vs person as printed, and whether it is within the margin."""
    jp_r, pp_r = r3(jp.get("value")), r3(pp.get("value"))
    if jp_r is None or pp_r is None:
        return {"judge_vs_person": jp_r, "person_vs_person": pp_r, "gap": None, "within_margin": None, "reason": None}
    gap = round(jp_r - pp_r, DIGITS)
    ok = gap >= -margin
    return {
        "judge_vs_person": jp_r,
        "person_vs_person": pp_r,
        "gap": gap,
        "within_margin": ok,
        "reason": f"judge vs person {jp_r:.3f} vs person vs person {pp_r:.3f}: gap {gap:+.3f}, "
        f"{'within' if ok else 'beyond'} the {margin:g} margin",
    }


def guarantee_conclusion(held: bool | None, *, cascade: bool) -> dict[str, Any]:
    """The holdout conclusion of a policy that routes by confidence (--rule guarantee, or a cascade): whether the
    disagreement with the majority on the items decided stayed within what the guarantee allows."""
    who = "the cascade's" if cascade else "the judge's"
    on = " on the items it decided" if cascade else ""
    reason = {
        True: f"held: {who} disagreement with the majority{on} stayed within the guarantee",
        False: f"NOT HELD: {who} disagreement with the majority{on} exceeded the guarantee",
        None: f"untested: {'the cascade' if cascade else 'the judge'} decided no item with a majority",
    }[held]
    return {"held": held, "reason": reason}
