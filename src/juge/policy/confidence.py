"""A judge's confidence in its verdict on one item: what ``--rule guarantee`` and ``--cascade`` route by.

:func:`item_confidence` is the one function derive (the threshold walk on dev), ``policy test`` (routing the
holdout) and ``route`` (recorded calls, or ``route --eval``'s live calls) all call. It reads the calls of the
policy's judge and template on the item (every repeat) and the verdict the policy routes (repeat 0's, as every
figure reads it). Per call, the probability that the call gave that verdict; the confidence is the mean over
calls:

- **log-probability margin** where the call carries the provider's distribution over the allowed answers
  (``Judgment.distribution``: a constrained judge's verdict on llamacpp, or openai with ``logprobs = true``): the probability
  mass on the verdict (PASS/FAIL, a pair's letter) or on the verdict's side of the pass threshold (scores);
- else the call's **own verdict**: 1 if it gave the verdict (a pair's letter, PASS/FAIL, a score on the same
  side of the threshold), 0 if not (or no verdict). With repeats this is the share of repeats agreeing with the
  verdict (the modal share when repeat 0 gave the modal verdict); with one PASS/FAIL call it is 1 on every item,
  so the walk can only let the judge decide every item or none;
- a **score** call without a distribution weighs its vote by the score's distance from the pass line (halfway
  between the threshold and the scale point below it), as a share of the way to the end of the scale on that
  side: a 5 on a 1-5 scale with threshold 4 is 1.0, a 4 is 0.33, a 3 (a fail) 0.2, a 1 is 1.0.

A **panel**'s call (:mod:`juge.judges.panel`: its model lists its members) stands for its members' calls in the
same slot (order, repeat): each member's call is scored as above against the panel's verdict, a member without a
call there (or without a verdict) backs nothing. So a panel's confidence is the share of its members agreeing
with its verdict (3/3: 1, 2/3: 0.67), with their log-probabilities where recorded, over every repeat: what the
panel measures, where its own call (one aggregated verdict) would give 1 on every item it settles.

Only the order of confidences on one judge's items matters to the walk
(:func:`juge.policy.guarantee.fixed_sequence_threshold`), so the sources need not share a scale across judges.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np

from juge.data.records import Judgment, RecordedCall
from juge.judges.panel import panel_members
from juge.policy.guarantee import pair_confidence
from juge.policy.results import PolicyResult

Call = Judgment | RecordedCall

_SOURCES = {
    "pairwise": (
        "mean over the judge's calls (both orders, all repeats) of the probability it gave the verdict's letter: "
        "the provider's log-probabilities where recorded, else 1 if the call wrote that letter and 0 if not"
    ),
    "passfail": (
        "mean over the judge's calls (all repeats) of the probability it gave the verdict: the provider's "
        "log-probabilities over PASS/FAIL where recorded, else 1 if the call wrote the verdict and 0 if not "
        "(the share of repeats agreeing; one call without log-probabilities: 1)"
    ),
    "score": (
        "mean over the judge's calls (all repeats) of the support for the verdict's side of the pass threshold: "
        "the provider's probability mass on that side where recorded, else the call's distance from the pass line "
        "(halfway between the threshold and the scale point below) as a share of the way to that end of the "
        "scale, 0 for a call on the other side"
    ),
}
PANEL_SOURCE = (
    "; a panel's call counts as its members' calls in that order and repeat (the share of members agreeing with "
    "the panel's verdict)"
)
SOURCES = {kind: text + PANEL_SOURCE for kind, text in _SOURCES.items()}


def item_confidence(
    kind: str,
    verdict: str | float | None,
    calls: Iterable[Call],
    *,
    threshold: float | None = None,
    scale: Sequence[float | str] | None = None,
    members: Iterable[Call] | None = None,
) -> float:
    """The judge's confidence in ``verdict`` on one item, from its calls there (module docstring).

    ``kind``: pairwise, passfail or score. ``verdict``: the routed verdict (a pair's ``A``/``B``/``tie``; PASS or
    FAIL; a score), None when there is none (confidence 0). Scores need the policy's ``threshold`` and ``scale``.
    ``members``: the other calls on the item, where a panel's members' are read (needed when ``calls`` are a
    panel's: :func:`member_votes`).
    """
    calls = member_votes(calls, members)
    if kind == "pairwise":
        return pair_confidence(verdict if isinstance(verdict, str) else None, calls)
    if verdict is None:
        return 0.0
    if kind == "passfail":
        scores = [_passfail_support(str(verdict), j) for j in calls]
    elif kind == "score":
        if threshold is None:
            raise ValueError("a score judge's confidence needs the pass threshold")
        line, lo, hi = pass_line(threshold, scale)
        passes = float(verdict) >= threshold
        scores = [_score_support(passes, j, threshold, line, lo, hi) for j in calls]
    else:
        raise ValueError(f"no confidence for a {kind} judge")
    return float(np.mean(scores)) if scores else 0.0


def member_votes(calls: Iterable[Call], members: Iterable[Call] | None) -> list[Call]:
    """``calls`` with each panel call replaced by its members' calls in its slot (item, order, repeat), read from
    ``members``; a member without a call there is a call without a verdict (it backs nothing, as it has no vote in
    the panel's). A judge's own calls are kept as they are."""
    calls = list(calls)
    panels = [(j, panel_members(j.model)) for j in calls]
    if not any(keys for _, keys in panels):
        return calls
    if members is None:
        raise ValueError("a panel's confidence needs its members' calls on the item")
    by_slot = {(j.item_id, j.order, j.repeat, f"{j.judge}/{j.template}"): j for j in members}
    out: list[Call] = []
    for j, keys in panels:
        if not keys:
            out.append(j)
            continue
        for key in keys:
            judge, _, template = key.partition("/")
            no_vote = RecordedCall(j.item_id, judge, "", template, "", j.order, j.repeat, "", None, "unparsed")
            out.append(by_slot.get((j.item_id, j.order, j.repeat, key), no_vote))
    return out


def pass_line(threshold: float, scale: Sequence[float | str] | None) -> tuple[float, float, float]:
    """The pass line (halfway between the threshold and the scale point below it; threshold - 0.5 when none is
    below) and the scale's ends."""
    points = sorted(float(p) for p in (scale or ()) if not isinstance(p, str))
    below = [p for p in points if p < threshold]
    line = (threshold + below[-1]) / 2 if below else threshold - 0.5
    lo = min([*points, line]) if points else line - 1
    hi = max([*points, threshold]) if points else threshold + 1
    return line, lo, hi


def _read(kind: str, j: Call) -> float | str | None:
    from juge.calibration.grades import _read_value, is_score

    if j.outcome != "ok" or (kind == "passfail" and is_score(j.verdict)):
        return None
    return _read_value("passfail" if kind == "passfail" else "score", j.verdict)


def _passfail_support(verdict: str, j: Call) -> float:
    if j.distribution:
        total = sum(j.distribution.values())
        return j.distribution.get(verdict, 0.0) / total if total > 0 else 0.0
    return 1.0 if _read("passfail", j) == verdict else 0.0


def _score_support(passes: bool, j: Call, threshold: float, line: float, lo: float, hi: float) -> float:
    if j.distribution:
        mass = {float(k): v for k, v in j.distribution.items() if _is_number(k)}
        total = sum(mass.values())
        side = sum(v for k, v in mass.items() if (k >= threshold) == passes)
        return side / total if total > 0 else 0.0
    value = _read("score", j)
    if value is None or (float(value) >= threshold) != passes:
        return 0.0
    distance, room = (float(value) - line, hi - line) if passes else (line - float(value), line - lo)
    return float(min(1.0, distance / room)) if room > 0 else 1.0


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def routed_confidence(
    policy: PolicyResult, verdict: str | None, calls: Iterable[Call], members: Iterable[Call] | None = None
) -> float:
    """:func:`item_confidence` for a routed verdict as :class:`juge.policy.routed.RouteDecision` writes it (a
    score as text), with the policy's kind, pass threshold and scale (``members``: the item's other calls)."""
    value: str | float | None = verdict
    if policy.judge_kind == "score" and verdict is not None:
        value = float(verdict)
    return item_confidence(
        policy.judge_kind, value, calls, threshold=policy.threshold, scale=policy.scale, members=members
    )


def repeats_on(calls: Iterable[Call], keys: Iterable[str], ids: Iterable[str]) -> int | None:
    """How many times the judge (its ``keys``: judge/template) was asked per item on ``ids``: the highest repeat
    number plus one (None: no call). What the dev confidence read, so what routing must read too."""
    keys, ids = set(keys), set(ids)
    seen = [j.repeat for j in calls if j.item_id in ids and f"{j.judge}/{j.template}" in keys]
    return max(seen) + 1 if seen else None


def missing_repeats(calls: Iterable[Call], needed: int | None) -> str | None:
    """Why an item's calls cannot give a confidence comparable with dev's (fewer repeats than dev had), or None."""
    seen = len({j.repeat for j in calls})
    if not needed or seen >= needed:
        return None
    return (
        f"{seen} of the {needed} repeats the dev confidence read: ask the judge {needed} times (juge route --eval does)"
    )
