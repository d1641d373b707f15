"""``juge drift``: judge a fixed, human-labelled anchor set with the old and the new judge (through the normal run
path: engine, cache, store) and measure the change; optionally split a score change between two system runs into
the judge's part and the system's.

Attribution (``old_run``, ``new_run``): the old system run was judged by the old judge, the new one by the new
judge, and their score (the share of cases the judge passes) moved by Δ. The new judge re-judges the OLD run's
outputs on the anchor items (a run of its own, cached and stored); on those items the new judge's score minus the
old judge's is the judge's part, and Δ minus it the system's. Every interval comes from one clustered bootstrap
over the cases of both runs (:func:`juge.stats.bootstrap.resampled_totals`), so the parts are paired.
"""

from __future__ import annotations

import dataclasses
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.errors import InputError

if TYPE_CHECKING:
    from juge.calibration.source import StudySource
    from juge.data.readers import Source
    from juge.data.records import Judgment
    from juge.drift.results import Attribution, DriftResult
    from juge.judges.judge import Judge
    from juge.store import Store

KINDS: dict[str, Literal["pairwise", "passfail", "score"]] = {
    "passfail": "passfail",
    "score": "score",
    "pairwise": "pairwise",
}


def drift(
    anchor: Source,
    labels: Source | None = None,
    *,
    judges: Sequence[str | Path] = (),
    run: str | None = None,
    old_run: str | None = None,
    new_run: str | None = None,
    db: str | Path | None = None,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    concurrency: int | None = None,
    threshold: float | None = None,
    min_items: int = 30,
    resamples: int = 2000,
    seed: int = 0,
    level: float = 0.95,
    source: StudySource | None = None,
    progress: bool = False,
) -> DriftResult:
    """Judge the ``anchor`` items (a cases file with human ``labels``) with the old and the new judge and report
    the verdict changes, each judge's agreement with people, their paired difference and a conclusion
    (``juge drift``).

    ``judges``: the old and the new judge file; or one (the new) with ``run``, a stored run of the old judge on
    the anchor items. The judges are called through the normal run path (``provider``, ``base_url``,
    ``api_key_env``, ``concurrency`` as on ``juge run``; cache and store ``db``). ``old_run`` and ``new_run``:
    two stored system runs, judged by the old and the new judge, whose score change is split into the judge's
    part and the system's (module docstring); ``threshold``: where a score judge's verdict passes."""
    from juge.calibration.source import read_study, study_source
    from juge.drift.figures import drift_figures
    from juge.drift.results import DriftItem, DriftResult
    from juge.judges.identity import check_identity, identities_of_calls
    from juge.runs.api import load_judge
    from juge.store import open_store

    if (len(judges), run is None) not in ((2, True), (1, False)):
        raise InputError(
            "give the old and the new judge (--judge OLD --judge NEW), or a stored run of the old judge and the new "
            "judge (--run RUN --judge NEW)"
        )
    if (old_run is None) != (new_run is None):
        raise InputError("attribution needs both system runs: --old-run (old judge) and --new-run (new judge)")
    if min_items < 1:
        raise InputError(f"--min-items {min_items}: at least 1")
    loaded = [load_judge(p) for p in judges]
    setups = {j.setup for j in loaded}
    if len(setups) > 1:
        raise InputError(
            f"the judges are of different kinds ({', '.join(sorted(setups))}): drift compares like with like"
        )
    setup = loaded[0].setup
    if setup not in KINDS:
        raise InputError(f"judge {loaded[0].name}: setup {setup!r}; drift measures passfail, score and pairwise judges")
    if source is None:
        source = study_source(labels=labels)
    elif labels is not None:
        source = dataclasses.replace(source, labels=study_source(labels=labels).labels)
    if source.labels is None:
        raise InputError("give --labels FILE: the people's labels (item_id, rater_id, label) on the anchor items")
    inputs = read_study(dataclasses.replace(source, items=anchor, kind=KINDS[setup], run=None, judgments=()))
    anchor_ids = {c.id for c in inputs.data.cases}
    votes: dict[str, list[Any]] = {}
    for label in inputs.data.labels:
        if label.item_id in anchor_ids:
            votes.setdefault(label.item_id, []).append(label.label)
    calling = {"db": db, "provider": provider, "base_url": base_url, "api_key_env": api_key_env,
               "concurrency": concurrency, "progress": progress}  # fmt: skip
    anchor_path = _anchor_file(anchor)
    mapping = source.mapping or None
    new_calls, new_run_id = _judge_run(judges[-1], anchor_path, mapping, calling)
    if run is None:
        old_calls, old_run_id = _judge_run(judges[0], anchor_path, mapping, calling)
    else:
        with open_store(db, must_exist=True) as store:
            old_run_id = store.get_run(run)["id"]
            old_calls = _judge_calls(store.judgments(old_run_id), loaded[-1], old_run_id)
    old_calls = [j for j in old_calls if j.item_id in anchor_ids]
    new_calls = [j for j in new_calls if j.item_id in anchor_ids]
    old_verdicts, new_verdicts = _verdicts(old_calls, setup), _verdicts(new_calls, setup)
    figures = drift_figures(
        old_verdicts, new_verdicts, votes, n_resamples=resamples, seed=seed, level=level, min_items=min_items
    )
    old_id = _one_identity(identities_of_calls(old_calls), old_run_id)
    new_id = _one_identity(identities_of_calls(new_calls), new_run_id)
    moved = check_identity(old_id, new_id, key=f"{old_id.key} -> {new_id.key}")
    attribution = None
    if old_run is not None and new_run is not None:
        attribution = _attribution(
            old_run, new_run, judges[-1], loaded[-1], anchor_ids, calling, threshold=threshold, n_resamples=resamples,
            seed=seed, level=level,
        )  # fmt: skip
    from juge.calibration.inputs import NO_SPLIT_NOTICE

    notes = [n for n in inputs.notices if not n.startswith(NO_SPLIT_NOTICE)]  # an anchor set has no split
    if moved.ok:
        notes.append("the two judges show the same identity (model version and template hash): nothing to measure")
    unjudged = sorted(anchor_ids - set(votes))
    if unjudged:
        notes.append(f"{len(unjudged)} anchor items have no human label and are left out (e.g. {unjudged[0]!r})")

    def judge_part(calls: list[Judgment], verdicts: Mapping[str, Any], ident: Any, run_id: str, path: Any) -> Any:
        return {
            "judge_file": None if path is None else str(path),
            "run_id": run_id,
            "identity": ident.to_dict(),
            "agreement": None,
            "missing": sum(verdicts.get(i) is None for i in figures.items),
        }

    old_part = judge_part(old_calls, old_verdicts, old_id, old_run_id, judges[0] if run is None else None)
    new_part = judge_part(new_calls, new_verdicts, new_id, new_run_id, judges[-1])
    old_part["agreement"], new_part["agreement"] = figures.agreement_old, figures.agreement_new
    return DriftResult.model_validate(
        {
            "kind": KINDS[setup],
            "old": old_part,
            "new": new_part,
            "moved": [moved.to_dict()],
            "n_items": len(figures.items),
            "n_votes": sum(len(votes[i]) for i in figures.items),
            "n_changed": len(figures.changed),
            "changed_share": figures.changed_share,
            "difference": figures.difference,
            "conclusion": figures.conclusion,
            "direction": figures.direction,
            "reason": figures.reason,
            "min_items": min_items,
            "changed": [
                DriftItem(item_id=i, old=old_verdicts.get(i), new=new_verdicts.get(i), people=_counts(votes[i]))
                for i in figures.changed
            ],
            "attribution": attribution,
            "bootstrap": {"n_resamples": resamples, "seed": seed, "level": level, "unit": "item"},
            "notes": notes,
            "warnings": list(inputs.warnings),
        }
    )


def _anchor_file(anchor: Any) -> Path:
    if not isinstance(anchor, str | Path):
        raise InputError("--anchor: give the anchor items as a file (the judges are run on it as on juge run --cases)")
    path = Path(anchor)
    if not path.is_file():
        raise InputError(f"--anchor {path}: {'is a folder' if path.is_dir() else 'file not found'}")
    return path


def _judge_run(
    judge: str | Path, cases: Path, mapping: Mapping[str, str] | None, calling: Mapping[str, Any]
) -> tuple[list[Judgment], str]:
    """One judge file on the cases through juge's run path (cache, retries, store): its judgments and the run."""
    from juge.runs.api import run
    from juge.store import open_store

    done = run(cases=cases, judges=[judge], mapping=mapping, **calling)
    with open_store(done.db) as store:
        return store.judgments(done.run_id), done.run_id


def _judge_calls(calls: list[Judgment], judge: Judge, run_id: str) -> list[Judgment]:
    """A stored run's calls of the old judge: the one judge it has, or the one named like the new judge."""
    names = sorted({j.judge for j in calls})
    if len(names) == 1:
        return calls
    if judge.name in names:
        return [j for j in calls if j.judge == judge.name]
    raise InputError(
        f"run {run_id} has judges {', '.join(names) or 'none'}; none is named {judge.name!r} like the new judge, so "
        "which one is the old judge is unclear"
    )


def _one_identity(found: Mapping[str, Any], run_id: str) -> Any:
    if len(found) != 1:
        raise InputError(f"run {run_id}: expected the calls of one judge on the anchor items, found {len(found)}")
    return next(iter(found.values()))


def _verdicts(calls: Sequence[Judgment], setup: str) -> dict[str, Any]:
    """Each item's verdict in the labels' terms: PASS/FAIL, a score, or a pair's A/B/tie (both orders combined;
    orders that disagree are a tie); None when no readable verdict."""
    from juge.judges.pairwise import as_agreement_label, combine_orders

    by_item: dict[str, dict[Any, Judgment]] = {}
    for j in sorted(calls, key=lambda j: j.repeat, reverse=True):  # the first repeat wins
        by_item.setdefault(j.item_id, {})[j.order] = j
    out: dict[str, Any] = {}
    for item, by_order in by_item.items():
        if setup == "pairwise":
            letters = {o: (j.verdict if j.outcome == "ok" else None) for o, j in by_order.items()}
            out[item] = as_agreement_label(combine_orders(letters.get("12"), letters.get("21")))  # type: ignore[arg-type]
        else:
            single = by_order.get(None)
            verdict = single.verdict if single is not None and single.outcome == "ok" else None
            out[item] = float(verdict) if setup == "score" and isinstance(verdict, int | float) else verdict
    return out


def _counts(labels: Sequence[Any]) -> dict[str, int]:
    counts: dict[str, int] = {}
    for label in labels:
        counts[str(label)] = counts.get(str(label), 0) + 1
    return counts


def _attribution(
    old_run: str,
    new_run: str,
    judge_file: str | Path,
    judge: Judge,
    anchor_ids: set[str],
    calling: Mapping[str, Any],
    *,
    threshold: float | None,
    n_resamples: int,
    seed: int,
    level: float,
) -> Attribution:
    """The score change between two system runs, split: the new judge re-judges the old run's outputs on the
    anchor items (module docstring)."""
    import numpy as np

    from juge.drift.results import Attribution

    if judge.setup == "pairwise":
        raise InputError(
            "--old-run/--new-run: a pairwise judge gives no score to split (it says which answer is better)"
        )
    from juge.runs.compare import raw_outputs
    from juge.stats.bootstrap import percentile_interval, resampled_totals
    from juge.stats.estimate import Estimate
    from juge.store import open_store

    with open_store(calling["db"], must_exist=True) as store:
        a, b = store.get_run(old_run)["id"], store.get_run(new_run)["id"]
        cases_a = {c.id: c for c in store.run_cases(a)}
        common = sorted(cases_a.keys() & {c.id for c in store.run_cases(b)})
        pass_a = _passes(store, a, judge, threshold)
        pass_b = _passes(store, b, judge, threshold)
        shared = [i for i in common if i in anchor_ids]
        if not shared:
            raise InputError(f"runs {a[:12]} and {b[:12]}: no case of both is an anchor item, so nothing to re-judge")
        outputs = raw_outputs(store, a, [cases_a[i] for i in shared])
    rejudge = [cases_a[i].model_copy(update=_output_fields(outputs[i])) for i in shared]
    with tempfile.TemporaryDirectory(prefix="juge-drift-") as scratch:
        path = Path(scratch) / "old-outputs.jsonl"
        path.write_text("".join(c.model_dump_json(exclude_defaults=True) + "\n" for c in rejudge), "utf-8")
        calls, rejudged = _judge_run(judge_file, path, {}, calling)
    pass_re = {j.item_id: _passed(j, threshold) for j in calls if j.judge == judge.name and j.order is None}
    in_s = np.array([i in set(shared) for i in common], dtype=float)
    pa = np.array([pass_a.get(i, 0.0) for i in common])
    pb = np.array([pass_b.get(i, 0.0) for i in common])
    pr = np.array([pass_re.get(i, 0.0) for i in common]) * in_s
    columns = np.column_stack([pb, pa, np.ones(len(common)), pr, pa * in_s, in_s])

    def parts(t: Any) -> tuple[Any, Any, Any, Any, Any]:
        with np.errstate(invalid="ignore", divide="ignore"):
            old, new = t[..., 1] / t[..., 2], t[..., 0] / t[..., 2]
            judge_part = (t[..., 3] - t[..., 4]) / t[..., 5]
        return old, new, new - old, judge_part, new - old - judge_part

    point = parts(columns.sum(axis=0))
    resampled = parts(resampled_totals(columns, n_resamples=n_resamples, seed=seed))
    n = len(common)
    est = [
        Estimate(float(v), *percentile_interval(r, level=level), n=len(shared) if k == 3 else n, n_items=n)
        for k, (v, r) in enumerate(zip(point, resampled))
    ]
    total, judge_est = est[2], est[3]
    words = (
        f"of the {_points(total.value)} points, about {_points(judge_est.value)} "
        f"[{_points(judge_est.low)}, {_points(judge_est.high)}] come from the judge "
        f"(re-judged on {len(shared)} anchor items), {_points(est[4].value)} from the system"
    )
    return Attribution(
        old_run=a, new_run=b, rejudged_run=rejudged, judge=judge.name, score_old=est[0], score_new=est[1],
        total_change=total, judge_part=judge_est, system_part=est[4], words=words,
    )  # fmt: skip


def _points(x: float | None) -> str:
    return "n/a" if x is None else f"{100 * x:+.1f}"


def _output_fields(slots: Mapping[str, str | None]) -> dict[str, Any]:
    return {k: v for k, v in slots.items() if k in ("output", "output_1", "output_2") and v is not None}


def _passes(store: Store, run_id: str, judge: Judge, threshold: float | None) -> dict[str, float]:
    """1.0 where the run's judge (named like ``judge``, else its one judge) passes the case, else 0.0 (fail
    closed: a missing verdict does not pass)."""
    calls = [j for j in store.judgments(run_id) if j.order is None]
    calls = _judge_calls(calls, judge, run_id)
    return {j.item_id: _passed(j, threshold) for j in sorted(calls, key=lambda j: j.repeat, reverse=True)}


def _passed(j: Judgment, threshold: float | None) -> float:
    from juge.runs.verdicts import judgment_passes

    return 1.0 if judgment_passes(j, threshold) else 0.0
