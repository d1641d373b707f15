"""A live local judge for the demo: Gemma 3 270M on llama.cpp, pairwise, both orders.

The judge is a regular juge judge (:func:`juge.judges.judge_from_dict`): setup
``pairwise``, ``constrained = true``, the built-in ``pairwise-v1`` template, so
the answers are wrapped and neutralised like every other judge's, the prompt
asks for the bare letter, and `Judge.parse` accepts only ``A``, ``B`` or ``C``.
The provider scores those three letters (log-probabilities after the prompt,
see :mod:`juge.providers.llamacpp`); the arg-max is the verdict and the
distribution is kept on the judgment.

It runs through :class:`juge.engine.Engine` on a :class:`juge.store.Store`, like
``juge run``: every call is logged with its request and response, every
judgment is stored with the model version and the template hash, the response
cache makes a repeated demo make no model call, and an interrupted one resumes
where it stopped (a run is identified by the judge's version, the model, the
data and the sampled pairs).

The stored judgments are one more judge key of the calibration table
(:func:`juge.calibration.pairtable.add_judgments`). A 270M base model is expected to be
a weak judge; the calibration shows how weak.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from rich.console import Console

from juge import __version__
from juge.data.readers import records_hash, sample
from juge.data.records import Case, Judgment
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import Judge, judge_from_dict
from juge.providers.base import Provider
from juge.runs.execute import judges_config
from juge.runs.summary import summarize
from juge.store import Store

JUDGE_NAME = "local-gemma3-270m"
DEFAULT_LIMIT = 40
DESCRIPTION = "The better answer does what the question asks more correctly, helpfully and completely."


@dataclass
class LiveRun:
    """The stored run of the local judge: its id, judgments (both orders per pair) and engine counts."""

    run_id: str
    judgments: list[Judgment]
    stats: dict[str, int]
    resumed: bool


def live_judge(model: str) -> Judge:
    """The demo's local judge; `model` names the exact model (it is part of the cache key)."""
    spec = {
        "name": JUDGE_NAME,
        "setup": "pairwise",
        "description": DESCRIPTION,
        "constrained": True,
        "model": model,
        "max_tokens": 1,
    }
    return judge_from_dict(spec, source="juge demo --live")


def local_engine_options(progress: bool = True) -> EngineOptions:
    """One call at a time, no retry: the local model answers one call at once anyway (a retry
    would only queue behind it), and in sequence the two orders of a pair share the KV cache
    of the instructions and the question. The time-out allows a long prompt on a slow CPU."""
    return EngineOptions(concurrency=1, retries=0, timeout=600.0, progress=progress)


def choose_pairs(cases: Sequence[Case], limit: int | None = DEFAULT_LIMIT, *, seed: int = 0) -> list[Case]:
    """A seeded sample of `limit` pairs (all of them when limit is None)."""
    return sample([c for c in cases if c.is_pair], limit, seed=seed)


def run_identity(judge: Judge, cases: Sequence[Case]) -> str:
    """What makes two live runs the same run: the judge's version, its model and the judged pairs."""
    payload = [judge.name, judge.template_hash, judge.model, sorted(c.id for c in cases)]
    return "demo-live:" + hashlib.sha256(json.dumps(payload).encode()).hexdigest()[:16]


def run_live_judge(
    cases: Sequence[Case],
    store: Store,
    provider: Provider,
    model: str,
    *,
    limit: int | None = DEFAULT_LIMIT,
    seed: int = 0,
    dataset_hash: str | None = None,
    console: Console | None = None,
    progress: bool = True,
) -> LiveRun:
    """Judge a seeded sample of `limit` pairs in both orders (2 calls per pair) and store everything.

    An unfinished run of the same judge, model and pairs is resumed; a finished
    one is not reused, but its cached responses answer every call of the new run.
    `dataset_hash` defaults to the hash of the sampled cases.
    """
    chosen = choose_pairs(cases, limit, seed=seed)
    judge = live_judge(model)
    identity = run_identity(judge, chosen)
    dataset_hash = dataset_hash or records_hash(chosen)
    run_id = store.find_resumable_run(identity, dataset_hash)
    resumed = run_id is not None
    if run_id is None:
        config: dict[str, Any] = {
            "kind": "demo",
            "command": "juge demo --live",
            "limit": limit,
            "seed": seed,
            "judges": judges_config([judge]),
        }
        run_id = store.create_run(
            dataset_hash=dataset_hash,
            juge_version=__version__,
            cases=chosen,
            eval_hash=identity,
            name="demo-live",
            config=config,
        )
    engine = Engine(store, local_engine_options(progress), console)
    tasks = build_tasks(chosen, [judge])
    asyncio.run(engine.run_tasks(run_id, tasks, {judge.name: provider}, description="local judge"))
    summary = summarize(store, run_id, [judge]).model_copy(update={"engine": dict(engine.stats)})
    store.finish_run(run_id, summary.to_dict())
    return LiveRun(run_id=run_id, judgments=store.judgments(run_id), stats=dict(engine.stats), resumed=resumed)


def local_provider() -> tuple[Provider, str]:
    """The packaged Gemma 3 270M on llama.cpp, loaded, and its exact version string.

    Loading first makes a missing install fail once with its fix (`ProviderError`),
    not as one error judgment per call.
    """
    from juge.providers.llamacpp import LlamaCppProvider

    provider = LlamaCppProvider()
    return provider, provider.load().version


def live_demo_run(
    db: Path,
    *,
    split: str = "dev",
    limit: int | None = DEFAULT_LIMIT,
    seed: int = 0,
    console: Console | None = None,
    progress: bool = True,
) -> LiveRun:
    """The local judge on a seeded sample of the embedded demo pairs of `split` (dev, or all), stored in `db`.

    The model is loaded before the store is opened, so a missing install leaves no file behind.
    """
    from juge.calibration.demo import load_demo_data

    provider, model = local_provider()
    data, _ = load_demo_data()
    cases = [c for c in data.full_cases() if split == "all" or c.split == split]
    with Store(db) as store:
        return run_live_judge(
            cases,
            store,
            provider,
            model,
            limit=limit,
            seed=seed,
            dataset_hash=data.sources["items"],
            console=console,
            progress=progress,
        )
