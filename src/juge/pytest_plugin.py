"""juge inside pytest: the fixture ``juge_judge`` runs a judge on cases in a test, through the same engine, cache
and store as ``juge run``; :func:`assert_judged` gates the result on a pass rate (its point figure or its 95 %
lower bound) or on a calibrated policy, and fails with the cases that failed and the judge's own words.

Loaded by pytest through the ``pytest11`` entry point once juge is installed; options ``--juge-db PATH`` (ini
``juge_db``, else ``JUGE_DB``, else ``.juge/juge.db``). Example (examples/pytest/)::

    from juge.pytest_plugin import assert_judged

    def test_replies_are_faithful(juge_judge):
        run = juge_judge("evals/support.toml")
        assert_judged(run, min_pass_rate_lower=0.8)

This module is imported by every pytest run where juge is installed: it imports nothing of juge at import time
(each name is imported where it is used), so it costs no test run anything.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

if TYPE_CHECKING:
    from juge.policy.results import RouteResult
    from juge.runs.results import Run

__all__ = ["JugeJudge", "assert_judged"]

SHOWN_CASES = 10  # failing cases named in a failure message; the rest are counted
ANSWER_CHARS = 160


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("juge", "juge: LLM judges in tests (the juge_judge fixture)")
    group.addoption(
        "--juge-db",
        default=None,
        metavar="PATH",
        help="juge's store for juge_judge (a SQLite file or a postgresql:// URL): its cache answers repeated prompts. "
        "Default: the ini option juge_db, else JUGE_DB, else .juge/juge.db.",
    )
    parser.addini("juge_db", "juge's store for the juge_judge fixture (see --juge-db).", default=None)


class JugeJudge:
    """The ``juge_judge`` fixture: call it to run judges on cases (a :class:`juge.Run`), or with ``policy`` to route
    them by a calibrated policy (a :class:`juge.RouteResult`)."""

    def __init__(self, db: str, folder: Path):
        self.db = db
        self._folder = folder

    def __call__(
        self,
        eval_file: str | Path | None = None,
        *,
        cases: str | Path | Sequence[Mapping[str, Any]] | None = None,
        judge: str | Path | Sequence[str | Path] | None = None,
        only: Sequence[str] | None = None,
        policy: str | Path | None = None,
        provider: str | None = None,
        base_url: str | None = None,
        model: str | None = None,
    ) -> Any:
        """Run ``eval_file`` (or ``cases`` with ``judge`` files) and return the :class:`juge.Run`; ``cases`` may be
        a file or rows (dicts with juge's case fields: id, question, context, output, ...).

        With ``policy`` (a policy JSON from ``juge policy derive``, tested with ``juge policy test``) and
        ``eval_file``: the policy's judge is called on ``cases`` (default: the eval's cases) and each case is routed
        to the judge or to a person (a :class:`juge.RouteResult`), as ``juge route --eval``. ``provider``,
        ``base_url`` and ``model`` override the files' as on ``juge run``."""
        import juge

        rows = self._cases_file(cases)
        if policy is not None:
            if eval_file is None:
                raise juge.InputError("juge_judge(policy=...) needs eval_file: the eval file names the judge to call")
            from juge.config import load_eval

            items = rows if rows is not None else load_eval(eval_file).cases_path
            return juge.route(
                policy, eval_file=eval_file, items=items, db=self.db, provider=provider, base_url=base_url,
                model=model,
            )  # fmt: skip
        judges = [judge] if isinstance(judge, str | Path) else list(judge) if judge is not None else None
        return juge.run(
            eval_file, cases=rows, judges=judges, only=only, db=self.db, provider=provider, base_url=base_url,
            model=model,
        )  # fmt: skip

    def _cases_file(self, cases: str | Path | Sequence[Mapping[str, Any]] | None) -> Path | None:
        if cases is None or isinstance(cases, str | Path):
            return None if cases is None else Path(cases)
        self._folder.mkdir(parents=True, exist_ok=True)
        path = self._folder / f"cases-{len(list(self._folder.iterdir()))}.jsonl"
        path.write_text("".join(json.dumps(dict(row), ensure_ascii=False) + "\n" for row in cases), encoding="utf-8")
        return path


@pytest.fixture
def juge_judge(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> JugeJudge:
    """Run judges on cases inside a test, through juge's engine, cache and store (see :class:`JugeJudge`)."""
    config = request.config
    db = config.getoption("--juge-db") or config.getini("juge_db") or os.environ.get("JUGE_DB")
    if not db:
        from juge.store import DEFAULT_DB

        db = str(DEFAULT_DB)
    return JugeJudge(str(db), tmp_path_factory.mktemp("juge-cases"))


def assert_judged(
    result: Run | RouteResult,
    *,
    min_pass_rate: float | None = None,
    min_pass_rate_lower: float | None = None,
    labels: str | Path | None = None,
    max_to_person: int | None = None,
) -> None:
    """Fail the test (AssertionError) unless the judged cases meet the gate; the message names the gate, the
    figures with n, and each failing case with the judge's answer.

    A :class:`juge.Run`: ``min_pass_rate`` bounds the pass rate, ``min_pass_rate_lower`` its 95 % lower bound
    (exact, or PPI++ with ``labels``: people's PASS/FAIL on a random subset), as the eval file's ``[gate]`` does
    (the same rule); with neither, the eval's ``[gate]`` when it has one, else every case must pass. A case with
    no verdict (refused, unparsed, a failed call) never passes.

    A :class:`juge.RouteResult` (``juge_judge(..., policy=...)``): the policy must have held on its held-out
    test (an untested policy gates nothing), every case the policy leaves to the judge must pass, and at most
    ``max_to_person`` cases may go to a person (default: any number; they are named).
    """
    from juge.policy.results import RouteResult
    from juge.runs.results import Run

    __tracebackhide__ = True
    if isinstance(result, RouteResult):
        message = _policy_failure(result, max_to_person)
    elif isinstance(result, Run):
        message = _run_failure(result, min_pass_rate, min_pass_rate_lower, labels)
    else:
        raise TypeError(f"assert_judged takes what juge_judge returns (a juge.Run or RouteResult), got {type(result)}")
    if message:
        raise AssertionError(message)


def _run_failure(run: Run, minimum: float | None, floor: float | None, labels: str | Path | None) -> str | None:
    from juge.runs.gate import evaluate_gate, gate_record

    summary = run.summary
    if summary is None:
        return f"juge: run {run.run_id} has not finished (batches still out): nothing to gate"
    if run.first_error is not None:
        return f"juge: run {run.run_id}: no judgment could be made; the first error: {run.first_error}"
    if minimum is None and floor is None:
        if labels is not None:
            raise ValueError("labels correct the lower bound: give min_pass_rate_lower too")
        gate = run.gate or evaluate_gate(gate_record(1.0, None, None), summary)
    else:
        gate = evaluate_gate(gate_record(minimum, floor, Path(labels) if labels else None), summary, db=run.db)
    if gate is None:
        return (
            f"juge: run {run.run_id}: no check or counted judge passes or fails a case (a score judge counts only "
            "with [gate] min_score; pairwise verdicts never do): nothing to gate"
        )
    if gate.passed:
        return None
    lines = [
        f"juge: the gate failed on run {run.run_id} ({summary.cases_passed} of {summary.n_cases} cases pass, "
        f"{summary.cases_failed} fail, {summary.cases_missing} without a verdict):",
        *(f"  {line}" for line in gate.failures),
        *_failing_cases(run),
        f"  see: juge show {run.run_id} --outcome fail --db {run.db}",
    ]
    return "\n".join(lines)


def _failing_cases(run: Run) -> list[str]:
    """Each case that does not pass, with its reasons and the judge's answer (first line, shortened)."""
    from juge.runs.verdicts import run_outcomes, run_threshold
    from juge.store import open_store
    from juge.visible import terminal_safe

    with open_store(run.db, must_exist=True) as store:
        row = store.get_run(run.run_id)
        judgments = store.judgments(row["id"])
        outcomes, _ = run_outcomes(
            store.run_cases(row["id"]), judgments, store.check_results(row["id"]), row["config"],
            threshold=run_threshold(row["config"]),
        )  # fmt: skip
    answers = {(j.item_id, j.judge): j.text for j in judgments if j.order is None}
    failing = [(item, o) for item, o in outcomes.items() if o.verdict != "pass"]
    lines = [f"  cases that do not pass ({len(failing)}):"] if failing else []
    for item, outcome in failing[:SHOWN_CASES]:
        lines.append(f"    {terminal_safe(item)}: {outcome.verdict}: {terminal_safe('; '.join(outcome.reasons))}")
        for (case_id, judge), text in answers.items():
            if case_id == item and any(r.startswith(f"judge {judge}") for r in outcome.reasons) and text:
                said = " ".join(text.split())
                said = said if len(said) <= ANSWER_CHARS else said[: ANSWER_CHARS - 1] + "…"
                lines.append(f"      {judge} answered: {terminal_safe(said)}")
    if len(failing) > SHOWN_CASES:
        lines.append(f"    ... and {len(failing) - SHOWN_CASES} more")
    return lines


def _policy_failure(routed: RouteResult, max_to_person: int | None) -> str | None:
    from juge.visible import terminal_safe

    problems = []
    if routed.policy_status != "held":
        problems.append(
            f"the policy's status is {routed.policy_status or 'unknown'}: only a policy that held on its held-out "
            "test (juge policy test) gates a test"
        )
    failed = [d for d in routed.decisions if d.route == "judge" and d.passes is False]
    to_person = [d for d in routed.decisions if d.route == "person"]
    if failed:
        problems.append(f"{len(failed)} of {routed.n_to_judge} cases the policy leaves to the judge fail")
    if max_to_person is not None and len(to_person) > max_to_person:
        problems.append(f"{len(to_person)} cases go to a person, more than max_to_person = {max_to_person}")
    if not problems:
        return None
    lines = [f"juge: the policy gate failed (run {routed.run_id}):", *(f"  {p}" for p in problems)]
    for d in failed[:SHOWN_CASES]:
        lines.append(f"    {terminal_safe(d.item_id)} [{terminal_safe(d.category)}]: the judge said {d.verdict}")
    if to_person:
        shown = ", ".join(terminal_safe(d.item_id) for d in to_person[:SHOWN_CASES])
        more = f" and {len(to_person) - SHOWN_CASES} more" if len(to_person) > SHOWN_CASES else ""
        lines.append(f"  to a person ({len(to_person)}): {shown}{more}")
    return "\n".join(lines)
