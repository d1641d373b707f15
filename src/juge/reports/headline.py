"""The one-line answer a calibration opens with: can each judge stand in for a person, and where.

Per category, a judge stands in for a person when its figure with each person is within `margin` of
the same figure person vs person, compared as printed (3 decimals), the rule `juge policy derive`
uses: ``round(jp, 3) - round(pp, 3) >= -margin``. The figure is the one that says which judge is
better (:mod:`juge.calibration.better`): Cohen's kappa for PASS/FAIL, where the judge must also catch
at least as many failures as one person catches of another's; quadratic-weighted kappa for scores;
agreement for pairs. A figure resting on fewer than
MIN_PAIRS rater pairs (or judge-vs-person votes) is not measured: too few labels. When no
category can be measured, the pooled figures over all categories decide, and the line says so.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from juge.calibration import better
from juge.policy.decision import MIN_PAIRS
from juge.stats.estimate import format_estimate

MARGIN = 0.05
NO_CATEGORY = "(none)"  # the category the readers give an item that has none


@dataclass
class Place:
    """One category (or all of them pooled): the two agreements, their n and the decision."""

    name: str
    judge: float | None
    people: float | None
    n_judge: int
    n_people: int
    decision: str  # "stands in", "not", "not measured"
    caught: float | None = None  # PASS/FAIL: failures caught by the judge, and by one person of another's
    bar: float | None = None

    @property
    def gap(self) -> float | None:
        if self.judge is None or self.people is None:
            return None
        return round(round(self.judge, 3) - round(self.people, 3), 3)


@dataclass
class Headline:
    judge: str
    sentence: str
    stands_in: list[str] = field(default_factory=list)
    not_in: list[str] = field(default_factory=list)
    not_measured: list[str] = field(default_factory=list)
    pooled: bool = False
    places: list[Place] = field(default_factory=list)
    against: str = "people"  # or "gold": one label per item, no ceiling

    def to_dict(self) -> dict[str, Any]:
        return {
            "judge": self.judge,
            "against": self.against,
            "sentence": self.sentence,
            "stands_in": self.stands_in,
            "not_in": self.not_in,
            "not_measured": self.not_measured,
            "pooled": self.pooled,
            "places": [
                {
                    "name": p.name,
                    "judge_vs_person": p.judge,
                    "person_vs_person": p.people,
                    "n_votes": p.n_judge,
                    "n_pairs": p.n_people,
                    "gap": p.gap,
                    "decision": p.decision,
                    "failures_caught": p.caught,
                    "people_failures_caught": p.bar,
                }
                for p in self.places
            ],
        }


def _place(
    name: str,
    judge: dict[str, Any] | None,
    people: dict[str, Any] | None,
    margin: float,
    caught: tuple[dict[str, Any] | None, dict[str, Any] | None] | None = None,
) -> Place:
    """One place; `caught` (PASS/FAIL) is the judge's failures caught and the people's, each ``{"value", ...}``."""
    jv = judge.get("value") if judge else None
    pv = people.get("value") if people else None
    nj = int((judge or {}).get("n") or 0)
    npp = int((people or {}).get("n") or 0)
    got = bar = None
    enough = True
    if caught is not None:
        got, bar = ((c or {}).get("value") for c in caught)
        enough = better.catches_enough(got, bar) if caught[0] is not None else True
    if jv is None or pv is None or nj < MIN_PAIRS or npp < MIN_PAIRS:
        decision = "not measured"
    else:
        decision = "stands in" if round(round(jv, 3) - round(pv, 3), 3) >= -margin and enough else "not"
    return Place(name, jv, pv, nj, npp, decision, got, bar)


def _word(stat: str) -> str:
    """The figure's name before the two figures, when it is not agreement (the pairwise wording stays)."""
    return "" if stat == "agreement" else {"kappa": "kappa ", "weighted_kappa": "weighted kappa "}[stat]


def _catching(passfail: bool) -> str:
    return ", catching as many failures as one person catches of another's" if passfail else ""


def _or_missing(passfail: bool) -> str:
    return ", or catching fewer failures than one person catches of another's" if passfail else ""


def _names(names: list[str]) -> str:
    return ", ".join(names)


def gold_headline(data: dict[str, Any], judge: dict[str, Any]) -> Headline:
    """The line for a judge measured against gold labels (one per item): its figures against them, with
    intervals, and plainly that without a ceiling nobody knows whether it stands in for a person."""
    key = judge["key"]
    stat = better.measure(data.get("kind") or "pairwise")
    stat = stat if stat in data.get("stats", ()) else "agreement"
    vs = judge["vs_people"]
    shown = [s for s in dict.fromkeys([stat, "agreement"]) if vs.get(s)]
    parts = [f"{STAT_WORDS[s]} {format_estimate(vs[s])}" for s in shown]
    caught = vs.get("failures_caught") if data.get("kind") == "passfail" else None
    if caught:
        n = caught.get("n")
        parts.append(f"failures caught {caught.get('k')} of {n}: {format_estimate(caught)}")
    elif data.get("kind") == "passfail":
        parts.append("failures caught: not measured (no gold FAIL)")
    figures = "; ".join(parts) if parts else "no figure (no item both judged and labelled)"
    n_items = (data.get("truth") or {}).get("n_items") or data.get("n_items")
    place = vs.get(stat) or {}
    return Headline(
        judge=key,
        against="gold",
        sentence=(
            f"Judge {key} against the gold labels (one per item, {n_items} items): {figures}. No person-vs-person "
            "ceiling can be measured from one label per item, so whether the judge stands in for a person is not "
            "known; have a second person label a sample (e.g. 50 items) to measure it."
        ),
        not_measured=["person vs person"],
        pooled=True,
        places=[Place("all items", place.get("value"), None, int(place.get("n") or 0), 0, "vs gold")],
    )


STAT_WORDS = {"agreement": "agreement", "kappa": "kappa", "weighted_kappa": "weighted kappa"}


def judge_headline(data: dict[str, Any], judge: dict[str, Any], margin: float = MARGIN) -> Headline:
    """The line for one judge of the report data (`juge.reports.model.build_report_data`)."""
    if (data.get("truth") or {}).get("mode") == "gold":
        return gold_headline(data, judge)
    key = judge["key"]
    stat = better.measure(data.get("kind") or "pairwise")
    stat = stat if stat in data.get("stats", ()) else "agreement"
    passfail = data.get("kind") == "passfail"

    def caught(judge_figures: dict[str, Any], people: dict[str, Any]) -> tuple[Any, Any] | None:
        return (judge_figures.get("failures_caught"), people.get("failures_caught")) if passfail else None

    places = [
        _place(
            c["name"],
            (c["judges"].get(key) or {}).get(stat),
            c["ceiling"].get(stat),
            margin,
            caught(c["judges"].get(key) or {}, c["ceiling"]),
        )  # fmt: skip
        for c in data["categories"]
        if key in c["judges"]
    ]
    # Items without a category all sit under the placeholder "(none)": that is all items, not a category.
    uncategorised = [p.name for p in places] == [NO_CATEGORY]
    if uncategorised:
        places = []
    measured = [p for p in places if p.decision != "not measured"]
    head = Headline(judge=key, sentence="", places=places)
    if not measured:
        overall = _place(
            "all categories", judge["vs_people"].get(stat), data["ceiling"].get(stat), margin,
            caught(judge["vs_people"], data["ceiling"]),
        )  # fmt: skip
        head.pooled, head.places = True, [overall, *places]
        if overall.decision == "not measured":
            head.not_measured = [p.name for p in places] or ["all categories"]
            head.sentence = (
                f"Judge {key}: not measured: too few labels (judge vs person on {overall.n_judge} votes, person vs "
                f"person on {overall.n_people} rater pairs; at least {MIN_PAIRS} of each are needed)."
            )
            return head
        within = overall.decision == "stands in"
        where = "on all items (they carry no category)" if uncategorised else "over all categories pooled"
        figures = f"{_word(stat)}judge vs person {overall.judge:.3f}, person vs person {overall.people:.3f}"
        per_category = " (per category: not measured, too few labels)" if places else ""
        head.stands_in, head.not_in = (["all categories"], []) if within else ([], ["all categories"])
        within_words = f"within the {margin:g} margin of person vs person{_catching(passfail)}"
        beyond_words = f"beyond the {margin:g} margin of person vs person{_or_missing(passfail)}"
        head.sentence = (
            f"Judge {key} can stand in for a person {where} ({figures}: {within_words}){per_category}."
            if within
            else f"Judge {key} cannot stand in for a person {where} ({figures}: {beyond_words}){per_category}."
        )
        return head
    head.stands_in = [p.name for p in places if p.decision == "stands in"]
    head.not_in = [p.name for p in places if p.decision == "not"]
    head.not_measured = [p.name for p in places if p.decision == "not measured"]
    parts = []
    if head.stands_in:
        parts.append(
            f"Judge {key} can stand in for a person on {_names(head.stands_in)} ({_word(stat)}within the {margin:g} "
            f"margin of person vs person{_catching(passfail)})"
        )
        if head.not_in:
            parts.append(f"not on {_names(head.not_in)}")
    else:
        parts.append(
            f"Judge {key} cannot stand in for a person on {_names(head.not_in)} ({_word(stat)}beyond the {margin:g} "
            f"margin of person vs person{_or_missing(passfail)})"
        )
    if head.not_measured:
        parts.append(f"not measured on {_names(head.not_measured)}: too few labels")
    head.sentence = "; ".join(parts) + "."
    return head


def headlines(data: dict[str, Any], margin: float = MARGIN) -> list[Headline]:
    """One line per judge (baselines have no line: they make no model call)."""
    return [judge_headline(data, j, margin) for j in data["judges"] if not j["baseline"]]


def trivial_baseline_lines(study: dict[str, Any]) -> list[str]:
    """A line for a rule with no model (the longer answer wins) that agrees with people within the person-vs-person
    interval: on such items matching people takes no judge, so a judge's agreement says little beyond the rule.
    `study` is a calibration's JSON (``juge calibrate --json``)."""
    from juge.calibration.pairtable import LONGER_ANSWER

    ceiling = (study.get("ceiling") or {}).get("agreement") or {}
    rule = ((study.get("judges") or {}).get(LONGER_ANSWER) or {}).get("vs_people") or {}
    mine = rule.get("agreement") or {}
    if study.get("kind") != "pairwise" or ceiling.get("low") is None or mine.get("value") is None:
        return []
    if mine["value"] < ceiling["low"]:
        return []
    return [
        f"Picking the longer answer, with no model, agrees with people {format_estimate(mine)}, within the interval "
        f"of person vs person {format_estimate(ceiling)}. On these items a trivial rule matches people, so a "
        "judge's agreement says little beyond it; add items where the better answer is the shorter one."
    ]
