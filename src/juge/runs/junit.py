"""A stored run as JUnit XML (``juge run --junit``), the test report every CI reads.

One ``<testsuite>`` per judge (a test case per case, and per repeat), one for the deterministic checks (a test
case per case and check) and one for the gate (a test case per bound). A FAIL is a ``<failure>`` carrying the
judge's raw answer; a judgment with no verdict (refused, unparsed, a failed call, a case a judge never reached)
is an ``<error>``, never a pass (fail closed). Score judges that no ``[gate] min_score`` counts and pairwise
judges pass or fail no case: theirs are ``<skipped>`` and plain test cases with the verdict in ``<system-out>``.
Model and case text is made XML-safe: hidden and control characters are shown as ``⟨U+XXXX⟩``.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from juge.judges.pairwise import combine_orders
from juge.junit import JUnitSuite, junit_document
from juge.runs.verdicts import counted_judges, judgment_passes, run_judge_setups, run_threshold

if TYPE_CHECKING:
    from juge.data.records import Case, Judgment
    from juge.runs.results import Gate, Run


def _answer(j: Judgment) -> str:
    return (
        f"judge {j.judge} ({j.model}), outcome {j.outcome}"
        + (f": {j.reason}" if j.reason else "")
        + ("\n\n" + j.text if j.text else "")
    )


def run_junit(run: str | Run, *, db: str | Path | None = None, gate: Gate | None = None) -> str:
    """The JUnit XML of a stored run (``juge run --junit``): a test case per case and judge, per case and check,
    and per bound of the gate (``gate``, or the gate of a :class:`juge.Run` given as ``run``)."""
    from juge.store import open_store

    run_id = run if isinstance(run, str) else run.run_id
    if gate is None and not isinstance(run, str):
        gate = run.gate
    with open_store(db, must_exist=True) as store:
        row = store.get_run(run_id)
        cases = store.run_cases(row["id"])
        judgments = store.judgments(row["id"])
        checks = store.check_results(row["id"])
    config = row["config"] or {}
    threshold = run_threshold(config)
    setups = run_judge_setups(config)
    rule = counted_judges([*setups, *((j.judge, None) for j in judgments)], threshold=threshold)
    by_case: dict[tuple[str, str], list[Judgment]] = defaultdict(list)
    for j in judgments:
        by_case[(j.item_id, j.judge)].append(j)
    suites = [_judge_suite(name, cases, by_case, threshold, kind) for name, kind in _kinds(rule)]
    if checks:
        suite = JUnitSuite("checks")
        names = sorted({name for per in checks.values() for name in per})
        for case in cases:
            for name in names:
                if name in checks.get(case.id, {}):
                    passed, reason = checks[case.id][name]
                    failed = None if passed else (f"check {name} failed", reason or "")
                    suite.case(f"check {name}", case.id, failure=failed, kind="check")
        suites.append(suite)
    if gate is not None:
        suites.append(_gate_suite(gate))
    return junit_document(f"juge run {row['id']}" + (f" ({row['name']})" if row.get("name") else ""), suites)


def _kinds(rule: object) -> Iterable[tuple[str, str]]:
    for kind in ("counted", "not_counted", "pairwise"):
        for name in getattr(rule, kind):
            yield name, kind


def _judge_suite(
    name: str,
    cases: list[Case],
    by_case: dict[tuple[str, str], list[Judgment]],
    threshold: float | None,
    kind: str,
) -> JUnitSuite:
    suite = JUnitSuite(f"judge {name}")
    classname = f"judge {name}"
    for case in cases:
        found = by_case.get((case.id, name), [])
        if kind == "pairwise" or case.is_pair:
            if kind != "pairwise" or not case.is_pair:
                continue  # a single-answer judge on a pair, or a pairwise judge on a single answer: not asked
            _pair_cases(suite, classname, case.id, found)
            continue
        if not found:
            suite.case(
                classname, case.id, error=("no judgment (the judge never reached this case)", ""), kind="missing"
            )
            continue
        repeats = sorted({j.repeat for j in found})
        for j in sorted(found, key=lambda j: j.repeat):
            label = case.id + (f" repeat {j.repeat}" if len(repeats) > 1 else "")
            if kind == "not_counted":
                suite.case(
                    classname, label, skipped="a score judge counts only with [gate] min_score",
                    out=f"verdict {j.verdict!r}\n\n{j.text}", seconds=j.latency,
                )  # fmt: skip
                continue
            passes = judgment_passes(j, threshold)
            if passes is None:
                what = j.outcome if j.outcome != "ok" else "unreadable verdict"
                suite.case(
                    classname,
                    label,
                    error=(f"no verdict: {what} (never a pass)", _answer(j)),
                    kind=what,
                    seconds=j.latency,
                )
            elif not passes:
                suite.case(
                    classname,
                    label,
                    failure=(f"{name} said FAIL ({j.verdict!r})", _answer(j)),
                    kind="FAIL",
                    seconds=j.latency,
                )
            else:
                suite.case(classname, label, out=f"verdict {j.verdict!r}", seconds=j.latency)
    return suite


def _pair_cases(suite: JUnitSuite, classname: str, case_id: str, found: list[Judgment]) -> None:
    by_repeat: dict[int, dict[str, Judgment]] = defaultdict(dict)
    for j in found:
        by_repeat[j.repeat][j.order or ""] = j
    if not by_repeat:
        suite.case(classname, case_id, error=("no judgment (the judge never reached this pair)", ""), kind="missing")
    for repeat, orders in sorted(by_repeat.items()):
        label = case_id + (f" repeat {repeat}" if len(by_repeat) > 1 else "")
        letters = {
            o: j.verdict if j.outcome == "ok" and isinstance(j.verdict, str) else None for o, j in orders.items()
        }
        verdict = combine_orders(letters.get("12"), letters.get("21"))
        texts = "\n\n".join(f"order {o}: " + _answer(j) for o, j in sorted(orders.items()))
        if verdict is None:
            suite.case(
                classname, label, error=("no verdict in one order or both (never counted)", texts), kind="missing"
            )
        else:
            suite.case(classname, label, out=f"verdict {verdict} (both orders)\n\n{texts}")


def _gate_suite(gate: Gate) -> JUnitSuite:
    suite = JUnitSuite("gate")
    if gate.min_pass_rate is not None:
        ok = gate.pass_rate >= gate.min_pass_rate
        message = f"pass rate {gate.pass_rate:.1%} < min_pass_rate {gate.min_pass_rate:.1%}"
        suite.case("gate", "min_pass_rate", failure=None if ok else (message, message), kind="gate",
                   out=f"pass rate {gate.pass_rate:.4f}, min_pass_rate {gate.min_pass_rate}")  # fmt: skip
    if gate.min_pass_rate_lower is not None:
        low = gate.pass_rate_lower
        ok = low is not None and low >= gate.min_pass_rate_lower
        line = next((f for f in gate.failures if "lower bound" in f), "")
        source = "PPI++ with the eval's labels" if gate.lower_from == "ppi" else "exact (Clopper-Pearson)"
        suite.case("gate", "min_pass_rate_lower", failure=None if ok else (line, line), kind="gate",
                   out=f"95 % lower bound {low} ({source}), min_pass_rate_lower {gate.min_pass_rate_lower}")  # fmt: skip
    return suite
