"""A policy's held-out test and its weekly audit as JUnit XML (``juge policy test --junit``, ``juge audit status
--junit``), for a CI: a test case per category and one for the policy as a whole.

Policy test: a category whose dev decision did not hold on the holdout is a ``<failure>`` carrying the reason;
one that could not conclude (too few items) is ``<skipped>``. Audit: a category that DRIFTED is a failure, one
with too few labels yet is skipped.
"""

from __future__ import annotations

from juge.junit import JUnitSuite, junit_document
from juge.policy.results import AuditGroup, AuditStatus, HoldoutTest


def _figure(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.1%}"


def policy_test_junit(test: HoldoutTest) -> str:
    """The JUnit XML of a held-out test: one test case per category, one for the policy (held or not)."""
    suite = JUnitSuite("policy test")
    classname = f"policy {test.policy_hash[:12]}"
    for name, category in sorted(test.per_category.items()):
        conclusion = category.conclusion
        reason = conclusion.reason if conclusion is not None else "no conclusion recorded"
        held = conclusion.held if conclusion is not None else None
        out = f"{category.n_items} items; dev decision {conclusion.dev_decision if conclusion else 'n/a'}: {reason}"
        if held is False:
            suite.case(classname, f"category {name}", failure=(f"not held in {name}: {reason}", out), kind="not held")
        elif held is None:
            suite.case(classname, f"category {name}", skipped=f"no conclusion: {reason}", out=out)
        else:
            suite.case(classname, f"category {name}", out=out)
    words = test.conclusion.reason if test.conclusion is not None else "no conclusion"
    forced = " (a FORCED test: these items were tested before)" if test.forced else ""
    whole = f"{test.n_items} items, split {test.split!r}{forced}: {words}"
    if test.held is False:
        suite.case(classname, "policy held", failure=(f"NOT HELD: {words}", whole), kind="not held")
    elif test.held is None:
        suite.case(classname, "policy held", skipped=f"no conclusion: {words}", out=whole)
    else:
        suite.case(classname, "policy held", out=whole)
    return junit_document(f"juge policy test {test.policy_hash[:12]}", [suite])


def audit_status_junit(status: AuditStatus) -> str:
    """The JUnit XML of a policy's weekly audit: one test case per category and one for every category at once."""
    suite = JUnitSuite("audit")
    classname = f"audit {status.policy_hash[:12]}"
    for name, group in [*sorted(status.categories.items()), ("all categories", status.overall)]:
        _audit_case(suite, classname, name, group)
    return junit_document(f"juge audit status {status.policy_hash[:12]} (judge {status.judge})", [suite])


def _audit_case(suite: JUnitSuite, classname: str, name: str, group: AuditGroup) -> None:
    a = group.agreement
    out = (
        f"{group.n_items} items, {group.n_labels} labels; agreement {_figure(a.value)} "
        f"[{_figure(a.low)}, {_figure(a.high)}], bar {_figure(group.bar)}, e-value {group.evidence:.2f}: {group.reason}"
    )
    if group.outcome == "drifted":
        suite.case(classname, name, failure=(f"DRIFTED in {name}: {group.reason}", out), kind="drifted")
    elif group.outcome == "too few labels yet":
        suite.case(classname, name, skipped=f"too few labels yet: {group.reason}", out=out)
    else:
        suite.case(classname, name, out=out)
