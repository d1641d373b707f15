"""The runs feature's API: run an eval, preview it, and read, compare and estimate its stored runs.

Re-exported by :mod:`juge.api` and :mod:`juge` (``juge.run``, ``juge.compare``, ...). Every function
returns a typed result and raises :class:`juge.errors.InputError` on bad input; none prints.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.config import eval_config
from juge.errors import InputError
from juge.results import Comparison, Run
from juge.store import DEFAULT_DB

# isort: split
# API functions that live in their own modules of this package, re-exported (``x as x``) one line each.
from juge.runs.corrected_run import estimate as estimate
from juge.runs.export import export as export
from juge.runs.listing import delete_runs as delete_runs
from juge.runs.listing import list_runs as list_runs
from juge.runs.preview import dry_run as dry_run
from juge.runs.preview import prompt as prompt
from juge.runs.select import show as show

if TYPE_CHECKING:
    from juge.judges.judge import Judge
    from juge.providers.base import Provider


# ---- run ---------------------------------------------------------------------------------------


RUN_OVERRIDES = (
    "cases",
    "judges",
    "mapping",
    "only",
    "repeat",
    "concurrency",
    "progress",
    "resume",
    "provider",
    "replay",
    "console",
    "wait",
    "base_url",
    "api_key_env",
    "model",
)


async def run_async(eval_or_path: Any, *, db: str | Path | None = None, **overrides: Any) -> Run:
    """Run an eval in the running event loop (``await juge.run_async("eval.toml")``; ``juge run``).

    ``eval_or_path`` is an eval file or an EvalConfig; without it, ``cases`` (a cases file) with ``judges``
    (judge files) and optionally ``mapping`` make one. ``db`` is the store (default ``.juge/juge.db``).
    ``overrides``: ``only`` (case ids), ``repeat``,
    ``concurrency``, ``progress`` (a progress bar on stderr, default off), ``resume`` (default on),
    ``provider`` (a provider name for every judge), ``base_url`` and ``api_key_env`` (its endpoint: a
    server given by address needs no key), ``model`` (every judge's model), ``replay`` (recorded judgments
    for the replay provider), ``console`` (where notes go), ``wait`` (batch mode: wait until every batch has ended; else a
    run whose batches are still out comes back with ``pending`` set and no summary, to be collected later).
    """
    from juge.arguments import refuse_text
    from juge.endpoint import provider_override, with_model
    from juge.runs.runner import gate_of, run_eval_async

    unknown = sorted(set(overrides) - set(RUN_OVERRIDES))
    if unknown:
        raise TypeError(f"juge.run: unknown option(s) {', '.join(unknown)}; known: {', '.join(RUN_OVERRIDES)}")
    refuse_text("only", overrides.get("only"), "list")
    config = eval_config(
        eval_or_path, cases=overrides.get("cases"), judges=overrides.get("judges"), mapping=overrides.get("mapping")
    )
    replay = overrides.get("replay")
    if replay is not None and not Path(replay).is_file():
        raise InputError(
            f"--replay {replay}: {'is a folder' if Path(replay).is_dir() else 'file not found'}; give the "
            "recorded judgments (JSONL)"
        )
    override = provider_override(
        overrides.get("provider") or ("replay" if replay else None),
        overrides.get("base_url"),
        overrides.get("api_key_env"),
        {"path": str(Path(replay).resolve())} if replay else None,
    )
    config.judges = with_model(config.judges, overrides.get("model"))
    only = overrides.get("only")
    with contextlib.ExitStack() as opened:
        result = await run_eval_async(
            config,
            lambda: opened.enter_context(_store(db, must_exist=False)),  # opened once the inputs are checked
            only=set(only) if only is not None else None,
            repeat=overrides.get("repeat", 1),
            concurrency=overrides.get("concurrency"),
            progress=overrides.get("progress", False),
            resume=overrides.get("resume", True),
            console=overrides.get("console"),
            provider_override=override,
            wait=overrides.get("wait", False),
        )
    return Run(
        run_id=result.run_id,
        db=str(db if db is not None else DEFAULT_DB),
        resumed=result.resumed,
        stored_now=result.stored_now,
        engine_stats=result.engine_stats,
        summary=result.summary,
        pending=result.pending,
        first_error=result.first_error,
        warnings=result.warnings,
        reused=result.reused,
        gate=gate_of(config, result.summary) if result.first_error is None else None,
    )


def run(eval_or_path: Any, *, db: str | Path | None = None, **overrides: Any) -> Run:
    """Run an eval (``juge run``): checks, then every judge on every case; returns the stored run.

    Works in a plain script and inside a running event loop (a notebook): there the run goes to a
    worker thread with its own loop and this call blocks until it ends; ``await juge.run_async(...)``
    is the non-blocking form. Options as :func:`run_async`.

    >>> import juge, tempfile
    >>> r = juge.run("examples/bakery/eval.toml", db=tempfile.mkdtemp() + "/j.db")  # doctest: +SKIP
    >>> r.summary.n_cases  # doctest: +SKIP
    8
    """
    coro = run_async(eval_or_path, db=db, **overrides)
    if not _in_running_loop():
        return asyncio.run(coro)
    with concurrent.futures.ThreadPoolExecutor(max_workers=1, thread_name_prefix="juge-run") as pool:
        return pool.submit(asyncio.run, coro).result()


def _in_running_loop() -> bool:
    # Asked outside the except block: a run started inside it would chain every later error to this one.
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return False
    return True


# ---- runs: compare and estimate -----------------------------------------------------------------


def _store(db: str | Path | None, *, must_exist: bool = True) -> Any:
    """The store at `db` (a SQLite file or a ``postgresql://`` URL; default ``.juge/juge.db``). A SQLite
    file that must exist and does not is an InputError; one that may be new gets its folder."""
    from juge.store import is_database_url, open_store

    where = db if db is not None else DEFAULT_DB
    if not is_database_url(where):
        path = Path(where)
        if must_exist and not path.exists():
            raise InputError(f"{path}: no juge database here (run `juge run` first, or pass --db)")
    return open_store(where)  # Store makes a new file's folder, or says why it cannot (exit 3)


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
) -> Comparison:
    """Compare two runs of the same cases (``juge compare``): transitions, paired difference, McNemar.

    Refuses (InputError) runs judged by different judge versions unless ``allow_different_judges``.
    """
    from juge.runs.compare import compare_runs

    with _store(db) as store:
        return compare_runs(
            store,
            _run_id(run_a),
            _run_id(run_b),
            threshold=threshold,
            allow_different_judges=allow_different_judges,
            n_resamples=resamples,
            seed=seed,
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


