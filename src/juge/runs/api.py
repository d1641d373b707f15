"""The runs feature's API: run an eval, preview it, and read, compare and estimate its stored runs.

Re-exported by :mod:`juge.api` and :mod:`juge` (``juge.run``, ``juge.compare``, ...). Every function
returns a typed result and raises :class:`juge.errors.InputError` on bad input; none prints.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.config import EvalConfig, eval_config
from juge.errors import InputError
from juge.lazy import lazy_names
from juge.runs.results import Comparison, Run

if TYPE_CHECKING:
    from juge.engine.progress import ProgressFactory
    from juge.judges.judge import Judge
    from juge.providers.base import Provider

    # isort: split
    # API functions that live in their own modules of this package, re-exported (``x as x``) one line each.
    from juge.runs.corrected_run import estimate as estimate
    from juge.runs.export import export as export
    from juge.runs.listing import delete_runs as delete_runs
    from juge.runs.listing import list_runs as list_runs
    from juge.runs.preview import dry_run as dry_run
    from juge.runs.preview import prompt as prompt
    from juge.runs.select import show as show

# ... imported on first use: `juge run` needs none of them, and they cost every run a few dozen ms of start-up.
__getattr__, __dir__ = lazy_names(
    __name__,
    {
        "estimate": "juge.runs.corrected_run",
        "export": "juge.runs.export",
        "delete_runs": "juge.runs.listing",
        "list_runs": "juge.runs.listing",
        "dry_run": "juge.runs.preview",
        "prompt": "juge.runs.preview",
        "show": "juge.runs.select",
    },
)


# ---- run ---------------------------------------------------------------------------------------


async def run_async(
    eval_or_path: str | Path | EvalConfig | None = None,
    *,
    db: str | Path | None = None,
    cases: str | Path | None = None,
    judges: Sequence[str | Path] | None = None,
    mapping: Mapping[str, str] | None = None,
    only: Iterable[str] | None = None,
    limit: int | None = None,
    repeat: int = 1,
    concurrency: int | None = None,
    progress: bool | ProgressFactory = False,
    resume: bool = True,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    model: str | None = None,
    replay: str | Path | None = None,
    wait: bool = False,
) -> Run:
    """Run an eval in the running event loop (``await juge.run_async("eval.toml")``; ``juge run``).

    Args:
        eval_or_path: an eval file (TOML) or an EvalConfig; None with ``cases`` and ``judges``.
        db: the store, a SQLite file or a ``postgresql://`` URL (default ``.juge/juge.db``).
        cases: a cases file (JSONL/CSV), instead of an eval file.
        judges: judge files (TOML), with ``cases``.
        mapping: with ``cases``, other column names read as juge fields (``{"id": "ticket"}``).
        only: the case ids to run (default: the eval's selection).
        limit: run only the first N cases of the selection, in file order (a quick look).
        repeat: ask each judge this many times in the same order (self-consistency).
        concurrency: calls in flight at once (default from the eval file, else 8).
        progress: True for a progress bar on stderr, or a factory ``(description, total, done) -> progress``
            (see :mod:`juge.engine.progress`); default off.
        resume: resume the unfinished run of the same eval and data (default on).
        provider: a provider name for every judge, overriding the eval and judge files.
        base_url: the provider's endpoint (a server given by address needs no key).
        api_key_env: the environment variable holding the provider's key.
        model: every judge's model.
        replay: recorded judgments (JSONL) for the replay provider.
        wait: batch mode: wait until every batch has ended; else a run whose batches are still out comes
            back with ``pending`` set and no summary, to be collected later.

    Returns the stored :class:`Run`; what the run warns about (a judge of the system's model family, a
    judge answering unparsed too often) is in ``Run.warnings``.
    """
    from juge.arguments import refuse_text
    from juge.config import provider_override, with_model
    from juge.runs.execute import run_eval_async
    from juge.runs.plan import RunOptions
    from juge.store import DEFAULT_DB, open_store

    refuse_text("only", only, "list")
    if limit is not None and limit < 1:
        raise InputError(f"--limit {limit}: give 1 or more")
    config = eval_config(eval_or_path, cases=cases, judges=judges, mapping=mapping)
    if replay is not None and not Path(replay).is_file():
        raise InputError(
            f"--replay {replay}: {'is a folder' if Path(replay).is_dir() else 'file not found'}; give the "
            "recorded judgments (JSONL)"
        )
    override = provider_override(
        provider or ("replay" if replay else None),
        base_url,
        api_key_env,
        {"path": str(Path(replay).resolve())} if replay else None,
    )
    config.judges = with_model(config.judges, model)
    options = RunOptions(
        only=frozenset(only) if only is not None else None,
        limit=limit,
        repeat=repeat,
        concurrency=concurrency,
        progress=progress,
        resume=resume,
        provider_override=override,
        wait=wait,
    )
    with contextlib.ExitStack() as opened:
        return await run_eval_async(
            config,
            lambda: opened.enter_context(open_store(db)),  # opened once the inputs are checked
            options,
            db=str(db if db is not None else DEFAULT_DB),  # as open_store opens it
        )


def run(
    eval_or_path: str | Path | EvalConfig | None = None,
    *,
    db: str | Path | None = None,
    cases: str | Path | None = None,
    judges: Sequence[str | Path] | None = None,
    mapping: Mapping[str, str] | None = None,
    only: Iterable[str] | None = None,
    limit: int | None = None,
    repeat: int = 1,
    concurrency: int | None = None,
    progress: bool | ProgressFactory = False,
    resume: bool = True,
    provider: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    model: str | None = None,
    replay: str | Path | None = None,
    wait: bool = False,
) -> Run:
    """Run an eval (``juge run``): checks, then every judge on every case; returns the stored run.

    Works in a plain script and inside a running event loop (a notebook): there the run goes to a
    worker thread with its own loop and this call blocks until it ends; ``await juge.run_async(...)``
    is the non-blocking form.

    Args:
        eval_or_path: an eval file (TOML) or an EvalConfig; None with ``cases`` and ``judges``.
        db: the store, a SQLite file or a ``postgresql://`` URL (default ``.juge/juge.db``).
        cases: a cases file (JSONL/CSV), instead of an eval file.
        judges: judge files (TOML), with ``cases``.
        mapping: with ``cases``, other column names read as juge fields (``{"id": "ticket"}``).
        only: the case ids to run (default: the eval's selection).
        limit: run only the first N cases of the selection, in file order (a quick look).
        repeat: ask each judge this many times in the same order (self-consistency).
        concurrency: calls in flight at once (default from the eval file, else 8).
        progress: True for a progress bar on stderr, or a factory ``(description, total, done) -> progress``
            (see :mod:`juge.engine.progress`); default off.
        resume: resume the unfinished run of the same eval and data (default on).
        provider: a provider name for every judge, overriding the eval and judge files.
        base_url: the provider's endpoint (a server given by address needs no key).
        api_key_env: the environment variable holding the provider's key.
        model: every judge's model.
        replay: recorded judgments (JSONL) for the replay provider.
        wait: batch mode: wait until every batch has ended (see :func:`run_async`).

    >>> import juge, tempfile
    >>> r = juge.run("examples/bakery/eval.toml", db=tempfile.mkdtemp() + "/j.db")  # doctest: +SKIP
    >>> r.summary.n_cases  # doctest: +SKIP
    8
    """
    coro = run_async(
        eval_or_path, db=db, cases=cases, judges=judges, mapping=mapping, only=only, limit=limit, repeat=repeat,
        concurrency=concurrency, progress=progress, resume=resume, provider=provider, base_url=base_url,
        api_key_env=api_key_env, model=model, replay=replay, wait=wait,
    )  # fmt: skip
    from juge.engine.loop import run_loop

    if not _in_running_loop():
        return run_loop(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="juge-run") as pool:
        return pool.submit(run_loop, coro).result()


def _in_running_loop() -> bool:
    # Asked outside the except block: a run started inside it would chain every later error to this one.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ---- runs: compare and estimate -----------------------------------------------------------------


def _run_id(run: str | Run) -> str:
    """A run id, or the id of a :class:`Run` that ``juge.run`` returned (the README passes those)."""
    return run.run_id if isinstance(run, Run) else run


def compare(
    run_a: str | Run,
    run_b: str | Run,
    *,
    db: str | Path | None = None,
    threshold: float | None = None,
    allow_different_judges: bool = False,
    resamples: int = 2000,
    seed: int = 0,
    against: str | Path | None = None,
    force: bool = False,
) -> Comparison:
    """Compare two runs of the same cases (``juge compare``): transitions, paired difference, McNemar.

    Refuses (InputError) runs judged by different judge versions unless ``allow_different_judges``; with
    ``against`` (a policy or calibration file), runs whose judge is not the one it measured (it has expired)
    unless ``force`` (then FORCED, in ``identity`` and ``warnings``).
    """
    from juge.runs.compare import compare_runs
    from juge.store import open_store

    with open_store(db, must_exist=True) as store:
        return compare_runs(
            store,
            _run_id(run_a),
            _run_id(run_b),
            threshold=threshold,
            allow_different_judges=allow_different_judges,
            n_resamples=resamples,
            seed=seed,
            against=against,
            force=force,
        )


# ---- judges and providers ------------------------------------------------------------------------


def load_judge(path: str | Path) -> Judge:
    """A judge file (TOML): its rubric, template (with content hash), parser and model.

    >>> import juge
    >>> judge = juge.load_judge("examples/bakery/judges/faithful.toml")  # doctest: +SKIP
    >>> judge.setup  # doctest: +SKIP
    'passfail'
    """
    from juge.judges.judge import load_judge as load

    return load(path)


def get_provider(name: str, **options: Any) -> Provider:
    """A provider by name (openai, anthropic, replay, scripted, llamacpp, or a plugin's), made with ``options``.

    >>> import asyncio, juge
    >>> from juge.providers import Request
    >>> p = juge.get_provider("scripted", default="PASS")
    >>> asyncio.run(p.complete(Request(messages=[{"role": "user", "content": "hi"}], model="m"))).text
    'PASS'
    """
    from juge.providers.registry import UnknownProvider, make_provider

    try:
        return make_provider(name, **options)
    except UnknownProvider as exc:
        raise InputError(str(exc)) from None
