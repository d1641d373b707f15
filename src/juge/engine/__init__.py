"""The engine: every model call of a run, and nothing else.

``calls.py`` (`Engine`: bounded concurrency, retries with backoff, the response cache, resume, the call log),
``limits.py`` (rate budgets and adaptive concurrency), ``batching.py`` (a provider's batch API) and
``progress.py`` (the progress callback a run reports to).
"""

from juge.engine.calls import (
    Answer,
    Engine,
    EngineOptions,
    JudgeTask,
    apply_checks,
    build_tasks,
    cache_key,
    check_outputs,
    iter_tasks,
    payer_of,
    run_together,
)

__all__ = [
    "Answer",
    "Engine",
    "EngineOptions",
    "JudgeTask",
    "apply_checks",
    "build_tasks",
    "cache_key",
    "check_outputs",
    "iter_tasks",
    "payer_of",
    "run_together",
]
