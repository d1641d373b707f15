"""`juge tune` as one API function: :func:`tune_judge` (re-exported as ``juge.tune_judge``).

The search itself (engine, numpy) is imported on call: ``import juge`` does not need it.
"""

from __future__ import annotations

import random
from collections import defaultdict
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError
from juge.providers.base import Provider
from juge.tune.models import TuneResult
from juge.tune.variants import LabelledItem

if TYPE_CHECKING:
    from juge.calibration.source import StudySource


def labelled_items(
    items: Path,
    labels: Path | None,
    kind: str,
    *,
    split: str,
    limit: int | None = None,
    seed: int = 0,
    source: StudySource | None = None,
) -> list[LabelledItem]:
    """The items of `split` that carry at least one human label, with their labels; with `limit`, the
    items of the first `limit` groups in a seeded order. `source` holds the shared input options (--map,
    --labels-map, --scale, ...); the judge's kind is the study's."""
    import dataclasses

    from juge.calibration import source as sources
    from juge.data.draw import unweighted_figures
    from juge.data.records import Case

    source = source or sources.StudySource()
    if source.kind is not None and source.kind != kind:
        raise InputError(f"--kind {source.kind}: the judge gives {kind} verdicts; its labels are read as {kind}")
    inputs = sources.read_study(dataclasses.replace(source, items=items, labels=labels, kind=kind))  # type: ignore[arg-type]
    unweighted_figures(inputs.draw, "juge tune")  # its choice counts every label alike
    if not inputs.has_splits:
        raise InputError(
            f"{items}: no split column; tune chooses on dev and tests once on holdout: "
            "run `juge split` first (it adds a dev/holdout split by group)"
        )
    votes: dict[str, list[Any]] = defaultdict(list)
    explanations: dict[str, str] = {}
    for lab in inputs.data.labels:
        votes[lab.item_id].append(lab.label)
        if lab.explanation and lab.item_id not in explanations:
            explanations[lab.item_id] = lab.explanation
    cases = [c for c in inputs.data.cases if isinstance(c, Case) and c.split == split and votes.get(c.id)]
    if limit is not None:
        groups = sorted({c.group for c in cases})
        random.Random(seed).shuffle(groups)
        keep = set(groups[:limit])
        cases = [c for c in cases if c.group in keep]
    if not cases:
        raise InputError(f"{items}: no item in split {split!r} has a human label")
    return [LabelledItem(c, tuple(votes[c.id]), explanations.get(c.id)) for c in cases]


def tune_judge(
    judge: str | Path,
    *,
    items: str | Path,
    labels: str | Path | None = None,
    out: str | Path,
    variants: str | Path | None = None,
    folds: int = 5,
    threshold: float | None = None,
    budget: float | None = None,
    provider: Provider | None = None,
    provider_name: str | None = None,
    model: str | None = None,
    db: str | Path | None = None,
    limit: int | None = None,
    shots: tuple[int, ...] = (2, 4, 8),
    propose: int = 0,
    candidates: tuple[str, ...] = (),
    test: bool = False,
    force: bool = False,
    seed: int = 0,
    n_resamples: int = 2000,
    concurrency: int = 8,
    progress: bool = False,
    source: StudySource | None = None,
) -> TuneResult:
    """Search for a better judge against people (``juge tune``): evaluate candidate judges on dev, choose
    one, write ``out/judge.toml``, ``out/TUNING.md`` and ``out/tuning.json``; with ``test=True`` run the
    chosen judge once on the holdout.

    Args:
        judge: The judge file (TOML) to tune.
        items: Items with a dev/holdout split (JSONL/CSV; ``juge split`` adds one).
        labels: Human labels (item_id, rater_id, label[, explanation]); None: the labels in the items file.
        out: Folder for judge.toml, TUNING.md, tuning.json and report.html (made if missing).
        variants: A folder of judge files (TOML) to try as candidates too.
        folds: Cross-fitting folds over dev groups (at least 2).
        threshold: Score judges: a score at or above it is a PASS (judge and person alike); required for them.
        budget: Stop starting candidates once this many US$ are spent.
        provider: A provider object for every candidate (tests, notebooks), overriding the judge file.
        provider_name: A provider by name for every candidate, overriding the judge file.
        model: The model for every candidate, overriding the judge file.
        db: The store (SQLite file or PostgreSQL URL); None: the default ``.juge/juge.db``.
        limit: Use only this many dev groups (a quick, cheap look).
        shots: Few-shot sizes to try (empty: none).
        propose: Ask the judge's model for this many rewritten rubrics, each a candidate.
        candidates: Only these candidates, by name (empty: all).
        test: Run the chosen judge once on the holdout.
        force: With ``test``: test a holdout again (recorded as FORCED).
        seed: Seed of the folds, the examples and the bootstrap.
        n_resamples: Bootstrap resamples.
        concurrency: Calls in flight at once.
        progress: Show a progress bar on stderr.
        source: How to read the items and labels (a :class:`~juge.calibration.source.StudySource`: --map,
            --labels-map, --scale, ...); None: juge's own column names.
    """
    from juge.store import DEFAULT_DB, open_store
    from juge.tune.outputs import staged_outputs, write_outputs
    from juge.tune.search import tune_judge as search
    from juge.tune.variants import base_spec

    judge_path, out_dir = Path(judge), Path(out)
    if out_dir.exists() and not out_dir.is_dir():
        raise InputError(f"--out {out_dir}: is a file; give a folder")
    _, base = base_spec(judge_path)
    kind = base.setup if base.setup in ("pairwise", "passfail") else "score"
    labels_path = Path(labels) if labels else None
    dev = labelled_items(Path(items), labels_path, kind, split="dev", limit=limit, seed=seed, source=source)
    provider_obj = provider or _provider_for(base, judge_path.parent, provider_name)
    with staged_outputs(out_dir) as staged_files:
        with open_store(db or DEFAULT_DB) as store:  # a SQLite file or a PostgreSQL URL
            result, tuned = search(
                judge_path, dev=dev, provider=provider_obj, store=store,
                variants_dir=Path(variants) if variants else None, folds=folds, threshold=threshold, budget=budget,
                shots=shots, model=model, propose_n=propose, only=candidates, seed=seed, n_resamples=n_resamples,
                concurrency=concurrency, progress=progress,
            )  # fmt: skip
            if test:
                from juge.tune.holdout import test_on_holdout

                hold = labelled_items(
                    Path(items), labels_path, kind, split="holdout", limit=limit, seed=seed, source=source
                )
                result.holdout = test_on_holdout(
                    tuned, judge_path.parent, hold, provider=provider_obj, store=store, threshold=threshold,
                    force=force, seed=seed, n_resamples=n_resamples, concurrency=concurrency,
                )  # fmt: skip
        write_outputs(staged_files, result, tuned)
    return result


def _provider_for(judge: Any, base_dir: Path, name: str | None) -> Provider:
    from juge.config import ProviderSpec
    from juge.runs.providers import Providers, judge_provider_spec

    spec = ProviderSpec(name=name) if name else judge_provider_spec(judge)
    if spec is None:
        raise InputError(f"judge {judge.name!r} names no provider: give --provider")
    return Providers(spec, base_dir).get(spec)
