"""One routed item: where it goes (judge or person), the reason's names, and the check that a judgment comes
from the model and template a policy was derived with. Pairwise and grade routing both build on it."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import asdict, dataclass
from typing import Any

from juge.data.records import Judgment
from juge.errors import InputError
from juge.policy.decision import CategoryDecision
from juge.policy.results import PolicyResult

JUDGE = "judge"

PERSON = "person"

REASON_UNCALIBRATED = "category not calibrated"

REASON_MISSING = "refused/unparsed/missing"

REASON_ORDER = "order changed the verdict"

REASON_CATEGORY = "category"

REASON_TOO_FEW = "too few items to decide"

REASON_CONFIDENCE = "low confidence"

REASON_NO_THRESHOLD = "no confidence threshold"

LETTERS = ("A", "B", "C")


@dataclass
class RouteDecision:
    """Where one item goes and why."""

    item_id: str
    category: str
    route: str
    reason: str
    detail: str
    verdict: str | None
    template: str | None
    confidence: float | None = None
    passes: bool | None = None  # PASS/FAIL and score judges: does the verdict pass the case
    stage: int | None = None  # a cascade: the stage that decided (1-based)

    @property
    def label(self) -> str:
        """``judge`` or ``person: <reason>``."""
        return JUDGE if self.route == JUDGE else f"{PERSON}: {self.reason}"

    def to_dict(self) -> dict[str, Any]:
        d = asdict(self)
        if d["stage"] is None:  # only a cascade's decisions name a stage
            del d["stage"]
        return {**d, "decision": self.label}


def check_versions(policy: PolicyResult, key: str, calls: Iterable[Judgment]) -> None:
    """Refuse judgments from a model or template version the policy was not derived with (the identity check of
    :mod:`juge.policy.identity`, item by item; a command forced past it routes with the found identity accepted)."""
    from juge.judges.identity import check_identity, identities_of_calls
    from juge.policy.identity import policy_identities

    expected = policy_identities(policy).get(key)
    if expected is None:
        return
    for j in calls:
        check = check_identity(expected, identities_of_calls([j])[key], key=key)
        fields = {m.field for m in check.mismatches}
        if "model" in fields:
            raise InputError(
                f"item {j.item_id!r}: judge {key} ran model {j.model!r}, but the policy was derived with "
                f"{', '.join(expected.models)}; the policy has EXPIRED: derive a new policy for this model "
                "(or --force, recorded)"
            )
        if "template_hash" in fields:
            raise InputError(
                f"item {j.item_id!r}: template {key} has hash {j.template_hash[:12]}, not the one the policy was "
                "derived with; the policy has EXPIRED: derive a new policy for this template (or --force, recorded)"
            )


def category_route(decided: CategoryDecision) -> tuple[str, str]:
    """Where an item goes by its category's decision, and the reason's name."""
    if decided.ruling == "too_few":
        return PERSON, REASON_TOO_FEW
    return (JUDGE, "category") if decided.route == JUDGE else (PERSON, REASON_CATEGORY)


def confidence_route(
    item_id: str,
    category: str,
    verdict: str | None,
    key: str,
    conf: float,
    threshold: float | None,
    *,
    passes: bool | None = None,
) -> RouteDecision:
    """``rule == "guarantee"``, any judge kind: the judge decides when its confidence is at or above the dev
    threshold; below it, or with no threshold (none met the target on dev), a person."""
    if threshold is None:
        detail = (
            f"no confidence threshold reached the target on dev: every item goes to a person "
            f"(this item's confidence {conf:.3f})"
        )
        return RouteDecision(item_id, category, PERSON, REASON_NO_THRESHOLD, detail, verdict, key, conf, passes)
    if conf < threshold:
        detail = f"confidence {conf:.3f} below threshold {threshold:.3f}"
        return RouteDecision(item_id, category, PERSON, REASON_CONFIDENCE, detail, verdict, key, conf, passes)
    detail = f"confidence {conf:.3f} >= {threshold:.3f}"
    return RouteDecision(item_id, category, JUDGE, "confidence", detail, verdict, key, conf, passes)
