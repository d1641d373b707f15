"""juge: make LLM-as-a-judge evaluation trustworthy.

The Python API (each function is what one `juge` command does, and returns a typed result)::

    import juge

    cal = juge.calibrate(items="items.jsonl", judgments="judgments.jsonl")   # -> juge.Calibration
    cal.ceiling.agreement          # Estimate(value, low, high, n): person vs person
    cal.judges["judge/pairwise-v1"].vs_people.agreement
    run = juge.run("eval.toml")    # -> juge.Run; in a notebook also: await juge.run_async("eval.toml")
    juge.report(cal, "report.html")

Names are imported on first use, so ``import juge`` stays cheap.

Architecture (README "Architecture"): each feature package owns its functions and result models (``api.py``,
``results.py``): ``runs``, ``calibration``, ``policy``, ``tune``, ``probes``, ``label``, ``reports``,
``scaffold``, ``demos``; this package, ``juge.api`` and ``juge.results`` re-export them. The layers, top to bottom (a
module imports only its own package and the layers below; ``|``: independent), checked by ``lint-imports``:

1. ``cli``, ``commands`` (the only code that prints)
2. ``api``, ``results`` (re-exports)
3. ``tune`` | ``probes`` | ``label`` | ``demos``
4. ``reports``
5. ``policy`` (live routing too)
6. ``runs`` | ``calibration``
7. ``engine`` (model calls: concurrency, limits, retries, cache, resume, batching, progress)
8. ``store`` (``open_store``: SQLite, PostgreSQL, layout, migrations)
9. ``config``, ``judges``, ``providers``, ``checks``, ``data``
10. ``stats`` (with ``Estimate`` and its one formatter)
11. ``parts`` (``Part`` and ``Result``, the base of every result model)
12. ``errors``, ``files``, ``visible``, ``lazy``
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from juge._version import __version__  # the package's version (pyproject reads it at build): no importlib.metadata

if TYPE_CHECKING:
    from juge import policy
    from juge.api import (
        audit_sample,
        audit_status,
        calibrate,
        calibration_inputs,
        compare,
        delete_runs,
        demo,
        demo_path,
        drift,
        dry_run,
        estimate,
        export,
        get_provider,
        import_traces,
        init_project,
        list_runs,
        load_judge,
        plan,
        policy_status,
        probe_injection,
        prompt,
        report,
        route,
        run,
        run_async,
        run_junit,
        show,
        split,
        tune_judge,
        view_server,
    )
    from juge.data.records import Case, HumanLabel, Judgment, Message
    from juge.errors import Fault, InputError, JugeError
    from juge.label.api import (
        label_add_rater,
        label_attach_run,
        label_disagreements,
        label_export,
        label_init,
        label_release,
        label_revoke_rater,
        label_rotate_link,
        label_server,
        label_status,
    )
    from juge.label.results import (
        LabelAttach,
        LabelDisagreements,
        LabelExport,
        LabelInit,
        LabelRelease,
        LabelStatus,
    )
    from juge.results import (
        AuditSample,
        AuditStatus,
        Calibration,
        Comparison,
        DriftResult,
        DryRun,
        Estimate,
        EstimateResult,
        ExportResult,
        HoldoutTest,
        InitResult,
        PlanResult,
        PolicyResult,
        PolicyStatusReport,
        ProbeResult,
        RenderedPrompt,
        RouteResult,
        Run,
        RunRow,
        RunSummary,
        ShowResult,
        SplitResult,
        TracesImport,
    )
    from juge.store import RunNotFound

_LAZY = {
    **dict.fromkeys(
        (
            "audit_sample",
            "audit_status",
            "calibrate",
            "calibration_inputs",
            "compare",
            "delete_runs",
            "demo",
            "demo_path",
            "drift",
            "dry_run",
            "estimate",
            "export",
            "get_provider",
            "import_traces",
            "init_project",
            "list_runs",
            "load_judge",
            "plan",
            "policy_status",
            "probe_injection",
            "prompt",
            "report",
            "route",
            "run",
            "run_async",
            "run_junit",
            "show",
            "split",
            "tune_judge",
            "view_server",
        ),
        "juge.api",
    ),
    **dict.fromkeys(
        (
            "AuditSample",
            "AuditStatus",
            "Calibration",
            "Comparison",
            "DriftResult",
            "DryRun",
            "Estimate",
            "EstimateResult",
            "ExportResult",
            "HoldoutTest",
            "InitResult",
            "PlanResult",
            "PolicyResult",
            "PolicyStatusReport",
            "ProbeResult",
            "RenderedPrompt",
            "RouteResult",
            "Run",
            "RunRow",
            "RunSummary",
            "ShowResult",
            "SplitResult",
            "TracesImport",
        ),
        "juge.results",
    ),
    **dict.fromkeys(("Fault", "InputError", "JugeError"), "juge.errors"),
    "RunNotFound": "juge.store",
    **dict.fromkeys(("Case", "HumanLabel", "Judgment", "Message"), "juge.data.records"),
    **dict.fromkeys(
        (
            "label_add_rater",
            "label_attach_run",
            "label_disagreements",
            "label_export",
            "label_init",
            "label_release",
            "label_revoke_rater",
            "label_rotate_link",
            "label_server",
            "label_status",
        ),
        "juge.api",
    ),
    **dict.fromkeys(
        ("LabelAttach", "LabelDisagreements", "LabelExport", "LabelInit", "LabelRelease", "LabelStatus"),
        "juge.label.results",
    ),
}

__all__ = [
    "audit_sample",
    "audit_status",
    "AuditSample",
    "AuditStatus",
    "calibrate",
    "Calibration",
    "calibration_inputs",
    "Case",
    "compare",
    "Comparison",
    "delete_runs",
    "demo",
    "demo_path",
    "drift",
    "DriftResult",
    "dry_run",
    "DryRun",
    "estimate",
    "Estimate",
    "EstimateResult",
    "export",
    "ExportResult",
    "Fault",
    "get_provider",
    "HoldoutTest",
    "HumanLabel",
    "import_traces",
    "init_project",
    "InitResult",
    "InputError",
    "Judgment",
    "JugeError",
    "label_add_rater",
    "label_attach_run",
    "label_disagreements",
    "label_export",
    "label_init",
    "label_release",
    "label_revoke_rater",
    "label_rotate_link",
    "label_server",
    "label_status",
    "LabelAttach",
    "LabelDisagreements",
    "LabelExport",
    "LabelInit",
    "LabelRelease",
    "LabelStatus",
    "list_runs",
    "load_judge",
    "Message",
    "plan",
    "PlanResult",
    "policy",
    "policy_status",
    "PolicyResult",
    "PolicyStatusReport",
    "probe_injection",
    "ProbeResult",
    "prompt",
    "RenderedPrompt",
    "report",
    "route",
    "RouteResult",
    "Run",
    "run",
    "run_async",
    "run_junit",
    "RunNotFound",
    "RunRow",
    "RunSummary",
    "show",
    "ShowResult",
    "split",
    "SplitResult",
    "TracesImport",
    "tune_judge",
    "view_server",
    "__version__",
]


def __getattr__(name: str) -> Any:
    if name == "policy":
        return importlib.import_module("juge.policy")
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'juge' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(__all__))
