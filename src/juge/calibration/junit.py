"""A calibration as JUnit XML (``juge calibrate --junit``): does each judge stand in for a person, per category?

One ``<testsuite>`` per judge (per criterion and judge with several criteria), a test case per category (or the
pooled figures, when no category can be measured), read from the study's headline: a judge that stands in passes,
one that does not is a ``<failure>`` with the two figures and their n, a category with too few labels is
``<skipped>``. A study against gold labels (no person-vs-person ceiling) says so as a skipped case. The study gates
nothing: ``juge calibrate`` exits 0 whatever the XML says (``juge policy test`` is the gate).
"""

from __future__ import annotations

from typing import Any

from juge.calibration.results import Calibration
from juge.junit import JUnitSuite, junit_document


def _figure(value: Any) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def calibration_junit(study: Calibration) -> str:
    """The JUnit XML of a calibration (its ``headline``: see :mod:`juge.reports.headline`)."""
    from juge.calibration.api import with_headline

    studies = sorted((study.criteria or {}).items()) or [("", study)]
    suites = []
    for criterion, one in studies:
        lines = one.headlines if one.headlines is not None else with_headline(one.model_copy()).headlines
        for line in lines or []:
            prefix = f"{criterion}: " if criterion else ""
            suite = JUnitSuite(f"{prefix}judge {line['judge']}")
            classname = f"calibration {prefix}{line['judge']}"
            places = line.get("places") or []
            if line.get("against") == "gold" or not places:
                suite.case(classname, "stands in for a person", skipped=line["sentence"], out=line["sentence"])
            for place in places:
                name = "all categories (pooled)" if line.get("pooled") else f"category {place['name']}"
                out = (
                    f"judge vs person {_figure(place['judge_vs_person'])} (n={place['n_votes']}), person vs person "
                    f"{_figure(place['person_vs_person'])} (n={place['n_pairs']}), gap {_figure(place['gap'])}"
                )
                if place.get("failures_caught") is not None:
                    out += (
                        f"; failures caught {_figure(place['failures_caught'])}, by one person of another's "
                        f"{_figure(place['people_failures_caught'])}"
                    )
                if place["decision"] == "not":
                    suite.case(classname, name, failure=(f"does not stand in for a person in {place['name']}", out),
                               kind="not")  # fmt: skip
                elif place["decision"] == "not measured":
                    suite.case(classname, name, skipped="not measured: too few labels", out=out)
                else:
                    suite.case(classname, name, out=out)
            suites.append(suite)
    return junit_document("juge calibrate", suites)
