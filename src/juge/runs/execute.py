"""The steps of a run after its plan: claim the stored run, judge it, finish it into a :class:`Run`.

``eval_config -> plan_run -> claim_run -> judge_run -> finish_run -> Run``:

- :func:`claim_run`: under the eval's lock, the unfinished run of the same eval and data (resumed), else a
  new one; the run is summarised and finished when the block ends without an error.
- :func:`judge_run`: the system's outputs (when the eval names one), the checks, then every judge on every
  case (pairs in both orders), through the engine (cache, retries, budgets) or the providers' batch APIs, then
  each panel's verdicts from its members' (:mod:`juge.runs.panels`).
- :func:`finish_run`: what the run measured as a :class:`Run`: its summary, the gate, its warnings (the
  plan's and the judged run's), the first error when nothing could be measured, an identical earlier run
  reused.

:func:`run_eval_async` runs the steps in order; :func:`judged_run` is the same claim for runs judged
outside ``juge run`` (tuning, probes).
"""

from __future__ import annotations

import fcntl
import hashlib
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

from juge import __version__
from juge.config import EvalConfig, ProviderSpec
from juge.data.records import Case, Judgment
from juge.engine import Engine, JudgeTask, apply_checks, build_tasks, iter_tasks
from juge.engine.batching import BatchedProvider, BatchPending, describe
from juge.engine.loop import run_loop
from juge.errors import InputError
from juge.judges.judge import Judge
from juge.judges.panel import UNSETTLED
from juge.providers.base import Provider
from juge.runs.gate import evaluate_gate, gate_record
from juge.runs.panels import panel_config, store_panel_judgments
from juge.runs.plan import RunOptions, RunPlan, check_renderable, plan_run
from juge.runs.providers import answering_judges, as_model, judge_specs
from juge.runs.results import Gate, Run, RunSummary
from juge.runs.summary import summarize
from juge.runs.system import generate_outputs, judged_cases
from juge.store import Store


@dataclass
class StoredRun:
    """A run being judged. `extra` joins its summary when it is finished; `summary` is set then."""

    id: str
    resumed: bool
    extra: dict[str, Any] = field(default_factory=dict)
    summary: RunSummary | None = None
    reused: str | None = None  # the earlier identical run kept instead of this one (removed, never finished)


def run_eval(
    config: EvalConfig,
    store: Store,
    *,
    only: set[str] | None = None,
    repeat: int = 1,
    concurrency: int | None = None,
    progress: bool = True,
    resume: bool = True,
    console: object = None,  # no longer used: kept for callers that pass one
    provider_override: ProviderSpec | None = None,
    wait: bool = False,
) -> Run:
    """Run an eval to the end in a new event loop (see :func:`run_eval_async`). ``console`` is not used
    any more: warnings are in the result and notes go to :mod:`logging`."""
    options = RunOptions(
        only=frozenset(only) if only is not None else None,
        repeat=repeat,
        concurrency=concurrency,
        progress=progress,
        resume=resume,
        provider_override=provider_override,
        wait=wait,
    )
    return run_loop(run_eval_async(config, store, options))


async def run_eval_async(
    config: EvalConfig, store: Store | Callable[[], Store], options: RunOptions = RunOptions(), *, db: str = ""
) -> Run:
    """Judge the eval into `store` in the running event loop: plan, claim, judge, finish. In batch mode
    (``[engine] mode = "batch"``) requests go to the provider's batch API; ``options.wait`` polls until
    every batch has ended, else a run whose batches are still out returns with `pending` set and stays
    unfinished (a later call collects it). `store` may be a function that opens it: it is called once every
    input has been read and checked, so bad input never creates an empty store. `db` is where the store is,
    as the result names it (default: the store's path)."""
    plan = plan_run(config, options)
    if callable(store):
        store = store()
    where = db or str(getattr(store, "path", ""))
    engine = Engine(store, plan.engine_options)
    stored_before = 0
    try:
        with claim_run(plan, store, engine) as run:
            stored_before = store.count_judgments(run.id) if plan.batch else 0
            stored = await judge_run(plan, store, engine, run.id)
    except BatchPending as pending:  # the run stays unfinished: a later run collects the batches
        return Run(
            run_id=run.id,
            db=where,
            resumed=run.resumed,
            stored_now=store.count_judgments(run.id) - stored_before,
            engine_stats=dict(engine.stats),
            pending=describe(pending.statuses),
            warnings=list(plan.warnings),
        )
    return finish_run(plan, store, engine, run, stored, db=where)


@contextmanager
def claim_run(plan: RunPlan, store: Store, engine: Engine) -> Iterator[StoredRun]:
    """The stored run `plan` judges, under its lock: the unfinished run of the same eval and data (when the
    plan resumes), else a new one. Summarised and finished when the block ends without an error."""
    config, options = plan.config, plan.options

    def create() -> str:
        return store.create_run(
            dataset_hash=plan.dataset_hash,
            juge_version=__version__,
            cases=plan.selection if plan.prepared is None else (case for case, _ in plan.prepared),
            eval_hash=plan.eval_hash,
            name=config.spec.name,
            config={
                "kind": config.run_kind,
                "eval_file": config.source,
                "repeat": options.repeat,
                "judges": judges_config(
                    answering_judges(config, options.provider_override),
                    [spec.name if spec else None for spec in judge_specs(config, options.provider_override)],
                ),
                **({"panels": panel_config(config.panels, config.judges)} if config.panels else {}),
                "system": (config.spec.system.model_dump() | {"template_hash": plan.system_prompt.hash})
                if config.spec.system and plan.system_prompt
                else None,
                "min_score": config.spec.gate.min_score,
                "min_pass_rate": config.spec.gate.min_pass_rate,  # the gate, for `juge view`
                "gate": eval_gate(config),
                "only": sorted(options.only) if options.only else None,
            },
        )

    with stored_run(
        store,
        engine,
        plan.judges,
        eval_hash=plan.eval_hash,
        dataset_hash=plan.dataset_hash,
        resume=options.resume,
        create=create,
        min_score=config.spec.gate.min_score,
        alone=plan.batch,
        twin=(lambda run_id: _earlier_twin(store, engine, run_id)) if options.resume else None,
    ) as run:
        yield run


def _earlier_twin(store: Store, engine: Engine, run_id: str) -> str | None:
    """The earlier finished run that `run_id` repeats, which is then removed (see `juge.runs.reuse`): only when
    no answer of the run was paid for, by this process or by one killed before it (a resumed twin)."""
    if engine.stats.get("calls", 0) or store.count_calls(run_id):
        return None
    from juge.runs.reuse import reuse_earlier_run

    return reuse_earlier_run(store, run_id)


async def judge_run(plan: RunPlan, store: Store, engine: Engine, run_id: str) -> int:
    """Judge the claimed run: the system's outputs first (when the eval names a system), then the checks,
    then every judge on every case; returns the judgments stored. In batch mode each provider answers
    through one batch runner for the run (:class:`BatchPending` when batches are still out)."""
    batched: dict[int, BatchedProvider] = {}
    eng = plan.config.spec.engine

    def answering(provider: Provider) -> Provider:
        """The provider itself, or in batch mode its one batch runner for this run."""
        if not plan.batch:
            return provider
        if id(provider) not in batched:
            batched[id(provider)] = BatchedProvider(
                provider, store, run_id, wait=plan.options.wait, poll=eng.batch_poll, max_requests=eng.batch_size
            )
        return batched[id(provider)]

    def cases() -> Iterator[Case]:
        return judged_cases(store, run_id, generated=plan.generated)

    try:
        if plan.system_prompt is not None:
            assert plan.system_provider is not None
            await generate_outputs(
                plan.config,
                plan.system_prompt,
                store,
                run_id,
                answering(plan.system_provider),
                engine,
                workers=min(engine.options.concurrency, plan.selection.count),
            )
            # the system's outputs are new; without them the check was of stand-ins
            check_renderable(iter_tasks(cases(), plan.judges, 1), plan.config)
        if plan.prepared is not None:  # the cases and prompts the plan read and checked: the store's are the same
            apply_checks(store, run_id, (case for case, _ in plan.prepared), plan.config.checks)
            tasks = prepared_tasks(plan.prepared, plan.options.repeat)
        else:
            apply_checks(store, run_id, cases(), plan.config.checks)
            tasks = iter_tasks(cases(), plan.judges, plan.options.repeat)
        stored = await engine.run_tasks(
            run_id, tasks, {name: answering(p) for name, p in plan.judge_providers.items()}, total=plan.n_tasks
        )
        return stored + store_panel_judgments(store, run_id, plan.config.panels, plan.judges)
    finally:
        for runner in batched.values():
            await runner.aclose()
        if plan.providers is not None:
            await plan.providers.aclose()


def prepared_tasks(prepared: Iterable[tuple[Case, Sequence[JudgeTask]]], repeat: int) -> Iterator[JudgeTask]:
    """The judge tasks of a plan's prepared cases, each asked `repeat` times, in the order of
    :func:`juge.engine.iter_tasks` (a repeat sends the same prompt: the repeat index only keys the cache)."""
    for _, tasks in prepared:
        for task in tasks:
            yield task
            for r in range(1, repeat):
                yield replace(task, repeat=r)


def finish_run(plan: RunPlan, store: Store, engine: Engine, run: StoredRun, stored: int, *, db: str) -> Run:
    """The finished run as a :class:`Run`: its summary, its warnings (the plan's, then a judge answering
    unparsed too often), the first error when nothing was measured, the gate, and an earlier identical
    run reused (answered wholly from the cache: the new run is dropped, the earlier one named)."""
    summary_dict = run.summary.to_dict() if run.summary is not None else {}
    first_error = nothing_made(store, run.id, summary_dict)
    warnings = [*plan.warnings, *unparsed_warnings(store, run.id, summary_dict)]
    run_id, summary, reused = run.id, run.summary, run.reused is not None
    stats = engine.stats
    if run.reused is not None:
        run_id = run.reused
        summary = summary.model_copy(update={"run_id": run_id}) if summary is not None else None
    return Run(
        run_id=run_id,
        db=db,
        resumed=run.resumed,
        stored_now=0 if reused else stored,  # the new run's judgments went with it: nothing new is kept
        engine_stats=dict(stats),
        summary=summary,
        first_error=first_error,
        warnings=warnings,
        reused=reused,
        gate=gate_of(plan.config, summary, db=db) if first_error is None else None,
    )


def gate_of(config: EvalConfig, summary: RunSummary | None, *, db: str | None = None) -> Gate | None:
    """The eval's [gate] on a finished run (see :mod:`juge.runs.gate`); a gate no figure can meet is an input
    error."""
    spec = config.spec.gate
    if (spec.min_pass_rate is None and spec.min_pass_rate_lower is None) or summary is None:
        return None
    if summary.pass_rate is None:
        raise config.error(
            "no check or counted judge gives a pass rate (score judges count only with [gate] min_score)",
            "gate.min_pass_rate" if spec.min_pass_rate is not None else "gate.min_pass_rate_lower",
        )
    return evaluate_gate(eval_gate(config), summary, db=db)


def eval_gate(config: EvalConfig) -> dict[str, Any]:
    spec = config.spec.gate
    labels = config.path(spec.labels) if spec.labels is not None else None
    return gate_record(spec.min_pass_rate, spec.min_pass_rate_lower, labels)


UNPARSED_WARNING = 0.2  # a judge with more unparsed answers than this share probably has a format problem


def nothing_made(store: Store, run_id: str, summary: dict[str, Any]) -> str | None:
    """The first error when no judgment could be made (every judge call failed, or the system under
    test failed on every case, so nothing was judged); None when anything was measured."""
    judges = summary.get("judges") or {}
    made = sum(j["outcomes"][k] for j in judges.values() for k in ("ok", "refused", "unparsed"))
    errors = sum(j["outcomes"]["error"] for j in judges.values())
    system_errors = summary.get("system_errors") or 0
    if made or not (errors or system_errors):
        return None
    for j in store.judgments(run_id):
        if j.outcome == "error":
            return f"judge {j.judge} on case {j.item_id}: {j.reason or 'no reason recorded'}"
    for (item_id, _), out in sorted(store.outputs(run_id).items()):
        if out["outcome"] == "error":
            return f"the system under test on case {item_id}: {out['reason'] or 'no reason recorded'}"
    return "every call failed"


def unparsed_warnings(store: Store, run_id: str, summary: dict[str, Any]) -> list[str]:
    """One warning per judge with more than UNPARSED_WARNING of its answers unparsed, quoting one raw answer."""
    noisy = {
        name
        for name, j in (summary.get("judges") or {}).items()
        if (n := sum(j["outcomes"].values())) and j["outcomes"]["unparsed"] / n > UNPARSED_WARNING
    }
    if not noisy:
        return []
    example: dict[str, Judgment] = {}
    for j in store.judgments(run_id):
        if j.judge in noisy and j.outcome == "unparsed":
            example.setdefault(j.judge, j)
    warnings = []
    for name in sorted(noisy):
        outcomes = summary["judges"][name]["outcomes"]
        shown = example.get(name)
        raw = (shown.text[:300] + ("..." if len(shown.text) > 300 else "")) if shown else ""
        # A panel's unparsed calls are its members' splits, not a format its model missed.
        split = shown is not None and (shown.reason or "").startswith(UNSETTLED)
        advice = (
            "its members do not settle them: a person decides each" if split else "check the judge's format or model"
        )
        warnings.append(
            f"judge {name}: {outcomes['unparsed']} of {sum(outcomes.values())} answers unparsed "
            f"(more than {UNPARSED_WARNING:.0%}); {advice}. "
            f"One raw answer ({shown.reason if shown else '?'}): {raw!r}"
        )
    return warnings


@contextmanager
def stored_run(
    store: Store,
    engine: Engine,
    judges: Sequence[Judge],
    *,
    eval_hash: str,
    dataset_hash: str,
    resume: bool,
    create: Callable[[], str],
    min_score: float | None = None,
    alone: bool = False,
    twin: Callable[[str], str | None] | None = None,
) -> Iterator[StoredRun]:
    """The run an eval judges, under its lock: the unfinished run of the same eval and data (when
    `resume`), else a new one from `create()`. When the block ends without an error the run is
    summarised (`summarize`, the engine's counters, then `extra`) and finished; after an error
    (an interrupt) it stays unfinished, to be resumed. `twin(run_id)` may name an earlier run the new
    one repeats, having removed it: then it is never finished (`run.reused` names the earlier one), so a
    process killed at any point leaves no second finished copy, at most an unfinished one that the next
    re-run resumes and removes the same way."""
    # A shared store (PostgreSQL) lets several processes judge one run, unless the run is to be `alone`
    # (batch mode); on SQLite a second process is always refused.
    lock: AbstractContextManager[Any] = nullcontext()
    if not store.shares_runs:
        lock = run_lock(Path(store.path), eval_hash)
    elif alone:
        lock = store.exclusive(eval_hash)  # type: ignore[attr-defined]
    with lock:
        with store.joining(eval_hash):
            found = store.find_resumable_run(eval_hash, dataset_hash) if resume else None
            run = StoredRun(found or create(), resumed=found is not None)
        yield run
        summary = summarize(store, run.id, judges, min_score)
        run.summary = summary.model_copy(update={"engine": dict(engine.stats), **run.extra})
        run.reused = twin(run.id) if twin is not None else None
        if run.reused is None:
            store.finish_run(run.id, run.summary.to_dict())


def judges_config(judges: Iterable[Judge], providers: Sequence[str | None] = ()) -> list[dict[str, Any]]:
    """What a run's config records of each judge: its name, setup, template (id and hash), model, and the parts
    of its identity a policy derived from the run keeps (juge.judges.identity): provider, rubric hash, parser
    version."""
    from juge.judges.identity import rubric_hash
    from juge.judges.parsers import PARSER_VERSION

    judges = list(judges)
    named = list(providers) + [None] * (len(judges) - len(providers))
    return [
        {
            "name": j.name,
            "setup": j.setup,
            "template": j.template_id,
            "template_hash": j.template_hash,
            "model": j.model,
            **({"provider": p} if p else {}),
            "rubric_hash": rubric_hash(j),
            "parser_version": str(PARSER_VERSION),
        }
        for j, p in zip(judges, named)
    ]


@contextmanager
def judged_run(
    store: Store,
    engine: Engine,
    judges: Sequence[Judge],
    cases: Sequence[Case],
    *,
    provider: Provider,
    eval_hash: str,
    dataset_hash: str,
    name: str,
    config: dict[str, Any],
    resume: bool = True,
    description: str = "judging",
    work: Callable[[str], Awaitable[None]] | None = None,
) -> Iterator[StoredRun]:
    """A stored run judged by one provider outside `juge run` (tuning, a tuned judge's holdout test, a
    probe): the unfinished run of the same eval and data (when `resume`), else a new one holding `cases`,
    `name` and `config` with :func:`judges_config` (each judge with the model `provider` answers as).
    `work(run_id)` judges it (by default every case by every judge), then `provider` is closed before
    its event loop ends, whether judging ended or not.
    The block reads the judged run and may add to its `extra`; it is then summarised and finished
    (see :func:`stored_run`)."""

    def create() -> str:
        return store.create_run(
            dataset_hash=dataset_hash,
            juge_version=__version__,
            cases=list(cases),
            eval_hash=eval_hash,
            name=name,
            config={**config, "judges": judges_config(as_model(j, provider.answering_model(j.model)) for j in judges)},
        )

    async def judge_all(run_id: str) -> None:
        try:
            if work is not None:
                await work(run_id)
            else:
                tasks = build_tasks(cases, judges)
                await engine.run_tasks(run_id, tasks, {j.name: provider for j in judges}, description=description)
        finally:
            await provider.aclose()

    with stored_run(
        store, engine, judges, eval_hash=eval_hash, dataset_hash=dataset_hash, resume=resume, create=create
    ) as run:
        run_loop(judge_all(run.id))
        yield run


def run_lock_path(db_path: Path, eval_hash: str) -> Path:
    """The file a `juge run` of this eval locks beside a SQLite store."""
    return db_path.parent / f".run-{hashlib.sha256(eval_hash.encode()).hexdigest()[:16]}.lock"


@contextmanager
def run_lock(db_path: Path, eval_hash: str) -> Iterator[None]:
    """One process at a time on one eval's run: a second `juge run` would pay for the same calls.

    An OS file lock, so a killed process (even SIGKILL) releases it and the run can resume.
    """
    lock_path = run_lock_path(db_path, eval_hash)
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                f"another juge run is working on this eval right now (lock {lock_path}); "
                "wait for it to finish, then run again to resume or reuse its answers"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
