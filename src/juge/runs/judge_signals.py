"""What a stored run's judge said about each case, as ``juge label init --select`` reads it to choose what to label:
each case's predicted pass (the spread of the judge's verdicts per category), the pairs whose verdict changed with
the order of the answers, and the scores near the pass threshold."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from juge.data.records import Judgment

NEAR_THRESHOLD = 1.0  # a score within one scale point of the threshold: a coin flip away from the other verdict


@dataclass
class JudgeSignals:
    """Per case id of run ``run_id`` (None for recorded calls, ``source`` says where they were read): ``passes`` (1.0
    the case passes, 0.0 it fails or has no verdict: fail closed, as ``juge estimate`` predicts),
    ``order_dependent`` (a pairwise judge said different things in the two orders), ``near_threshold`` (a
    single-answer judge's score within ``near`` of ``threshold``)."""

    run_id: str | None
    source: str = ""
    cases: set[str] = field(default_factory=set)  # the case ids judged
    passes: dict[str, float] = field(default_factory=dict)
    order_dependent: set[str] = field(default_factory=set)
    near_threshold: set[str] = field(default_factory=set)
    threshold: float | None = None
    near: float = NEAR_THRESHOLD


def judge_signals(
    run: str, *, db: str | Path | None = None, threshold: float | None = None, near: float = NEAR_THRESHOLD
) -> JudgeSignals:
    """Read run ``run`` (id or prefix) in the juge store ``db``; ``threshold`` as ``juge estimate --threshold``
    (default: the run's own ``[gate] min_score``)."""
    from juge.runs.verdicts import run_outcomes, run_threshold
    from juge.store import open_store

    with open_store(db, must_exist=True) as store:
        run_row = store.get_run(run)
        threshold = run_threshold(run_row["config"], threshold)
        cases = store.run_cases(run_row["id"])
        judgments = [j for j in store.judgments(run_row["id"]) if j.repeat == 0]
        checks = store.check_results(run_row["id"])
    outcomes = None
    if checks or any(j.order is None for j in judgments):
        outcomes, _ = run_outcomes(cases, judgments, checks, run_row["config"], threshold=threshold)
    signals = JudgeSignals(run_id=run_row["id"], source=f"--run {run_row['id']}", cases={c.id for c in cases},
                           threshold=threshold, near=near)  # fmt: skip
    return _read_signals(signals, judgments, outcomes)


def recorded_signals(
    path: str | Path, *, judge: str | None = None, threshold: float | None = None, near: float = NEAR_THRESHOLD
) -> JudgeSignals:
    """The same from recorded judge calls (``--judgments FILE``, as ``juge calibrate`` reads them), of ``judge``
    (a judge's name, or ``judge/template`` as a policy names it) only when given (every judge's otherwise)."""
    from juge.data.adapters import read_recorded_judgments
    from juge.errors import InputError
    from juge.runs.verdicts import case_outcomes

    calls = [j for j in read_recorded_judgments(Path(path)) if j.repeat == 0]
    # A policy names its judge with its prompt when the calls hold several: judge/template.
    judgments = [j for j in calls if judge is None or judge in (j.judge, f"{j.judge}/{j.template}")]
    if not judgments:
        named = f" of judge {judge!r} (it has {', '.join(sorted({j.judge for j in calls})) or 'none'})" if judge else ""
        raise InputError(f"--judgments {path}: no recorded call{named}")
    ids = sorted({j.item_id for j in judgments})
    single = [j for j in judgments if j.order is None]
    outcomes = case_outcomes(ids, single, {}, threshold=threshold) if single else None
    signals = JudgeSignals(run_id=None, source=f"--judgments {path}", cases=set(ids), threshold=threshold, near=near)
    return _read_signals(signals, judgments, outcomes)


def _read_signals(signals: JudgeSignals, judgments: list[Judgment], outcomes: Any) -> JudgeSignals:
    from juge.judges.pairwise import combine_orders
    from juge.runs.verdicts import _score_of

    if outcomes is not None:
        signals.passes = {i: 1.0 if o.verdict == "pass" else 0.0 for i, o in outcomes.items()}
    threshold = signals.threshold
    for j in judgments:
        score = _score_of(j.verdict) if j.order is None and j.outcome == "ok" else None
        numeric = isinstance(score, int | float) and not isinstance(score, bool)
        if numeric and threshold is not None and abs(float(score) - threshold) <= signals.near:  # type: ignore[arg-type]
            signals.near_threshold.add(j.item_id)
    letters: dict[tuple[str, str, str], dict[str, Any]] = {}
    for j in judgments:
        if j.order is not None:
            verdict = j.verdict if j.outcome == "ok" and j.verdict in ("A", "B", "C") else None  # C: a tie
            letters.setdefault((j.item_id, j.judge, j.template), {})[j.order] = verdict
    for (item, _judge, _template), by_order in letters.items():
        if combine_orders(by_order.get("12"), by_order.get("21")) == "inconsistent":
            signals.order_dependent.add(item)
    return signals
