"""Typed results: every figure juge computes and every result JSON it writes, as pydantic models.

Each feature owns its results (``juge.calibration.results``, ``juge.runs.results``, ``juge.policy.results``,
``juge.probes.results``, ``juge.label.results``, ``juge.data.results``, ``juge.scaffold.results``) on the base in
``juge.parts``; the one ``Estimate`` (value, interval, n) and its one formatter, :func:`format_estimate`, live in
``juge.stats.estimate``. This module re-exports them all, with the list of result files and their schemas.

One model per result file (``Calibration``, ``RunSummary``, ``Comparison``, ``EstimateResult``, ``ProbeResult``,
``RouteResult``, ``AuditSample``; the policy file ``PolicyResult`` and its test ``HoldoutTest``).

The files keep the keys juge always wrote, and gain ``schema_version``. A result remembers which
keys it was built or loaded with, and ``to_dict()`` writes exactly those (so an older file read
and written again keeps its shape); keys a model does not declare are kept too (``extra="allow"``).
``to_dict()`` is what the CLI's ``--json`` writes.

The JSON Schemas in ``docs/schema/`` are generated from these models::

    python -m juge.results docs/schema
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from pydantic import TypeAdapter

from juge.calibration.results import (
    Agreement,
    AtThreshold,
    BootstrapInfo,
    Calibration,
    Caught,
    Ceiling,
    Confusion,
    Dataset,
    Disagreement,
    InconsistentPatterns,
    InputCounts,
    JudgeDifference,
    JudgeFigures,
    JudgeVersion,
    PeopleFigures,
    ReferenceComparison,
    ReliabilityPoint,
    StudyRun,
    Truth,
    Versions,
)
from juge.data.results import (
    KindGuess,
    SplitResult,
    SplitSide,
    TracesImport,
)
from juge.drift.results import Attribution, DriftItem, DriftJudge, DriftResult
from juge.label.results import (
    LABEL_RESULTS,
)
from juge.parts import (
    SCHEMA_VERSION,
    Part,
    Result,
    check_schema_version,
    describe_fields,
)
from juge.policy.results import (
    AuditBatch,
    AuditedDecision,
    AuditGroup,
    AuditRecord,
    AuditSample,
    AuditStatus,
    AuditWeek,
    CategoryConclusion,
    Conclusion,
    Coverage,
    DecisionPlan,
    ForcedUse,
    GuaranteeStep,
    HoldoutCategory,
    HoldoutFigures,
    HoldoutGap,
    HoldoutGuarantee,
    HoldoutRecord,
    HoldoutTest,
    MarginGap,
    Number,
    PairedDifference,
    PassRatePlan,
    PeopleAgreement,
    PlanResult,
    PolicyAudit,
    PolicyCandidate,
    PolicyCategory,
    PolicyCheck,
    PolicyDev,
    PolicyGuarantee,
    PolicyResult,
    PolicySelection,
    PolicyStatusReport,
    PreviousTest,
    ReferenceChoice,
    RoutedItem,
    RouteResult,
    ThresholdCandidate,
    ThresholdChoice,
)
from juge.probes.results import (
    KindFigures,
    ProbeBaseline,
    ProbeJudge,
    ProbeResult,
)
from juge.runs.results import (
    CaseSide,
    ChangedCase,
    CheckOutcome,
    CheckRate,
    CombinedVerdict,
    Comparison,
    Cost,
    DryRun,
    EstimateResult,
    ExportResult,
    Gate,
    RenderedPrompt,
    Run,
    RunJudge,
    RunRef,
    RunRow,
    RunRowJudge,
    RunRowSystem,
    RunSummary,
    ShownCase,
    ShownJudgment,
    ShownRun,
    ShowResult,
    StratifiedEstimate,
    StratumEstimate,
    Transitions,
)
from juge.scaffold.results import (
    InitResult,
)
from juge.stats.estimate import (
    Estimate,
    ExactRate,
    PlugInEstimate,
    PooledRate,
    TunedEstimate,
    estimate_parts,
    finite_or_none,
    format_estimate,
)

__all__ = [
    "Agreement",
    "AtThreshold",
    "AuditBatch",
    "AuditedDecision",
    "AuditGroup",
    "AuditRecord",
    "AuditSample",
    "Attribution",
    "AuditStatus",
    "AuditWeek",
    "BootstrapInfo",
    "Calibration",
    "CaseSide",
    "CategoryConclusion",
    "Caught",
    "Ceiling",
    "ChangedCase",
    "check_schema_version",
    "CheckOutcome",
    "CheckRate",
    "CombinedVerdict",
    "Comparison",
    "Conclusion",
    "Confusion",
    "Cost",
    "Coverage",
    "Dataset",
    "Disagreement",
    "DriftItem",
    "DriftJudge",
    "DecisionPlan",
    "DriftResult",
    "DryRun",
    "Estimate",
    "estimate_parts",
    "EstimateResult",
    "ExactRate",
    "ExportResult",
    "ForcedUse",
    "finite_or_none",
    "format_estimate",
    "Gate",
    "GuaranteeStep",
    "HoldoutCategory",
    "HoldoutFigures",
    "HoldoutGap",
    "HoldoutGuarantee",
    "HoldoutRecord",
    "HoldoutTest",
    "InconsistentPatterns",
    "InitResult",
    "InputCounts",
    "JudgeDifference",
    "JudgeFigures",
    "JudgeVersion",
    "KindFigures",
    "KindGuess",
    "LABEL_RESULTS",
    "LISTS",
    "MarginGap",
    "Number",
    "PairedDifference",
    "Part",
    "PeopleAgreement",
    "PeopleFigures",
    "PlugInEstimate",
    "POLICY_FILES",
    "PolicyAudit",
    "PolicyCandidate",
    "PolicyCategory",
    "PolicyCheck",
    "PolicyDev",
    "PolicyGuarantee",
    "PassRatePlan",
    "PlanResult",
    "PolicyResult",
    "PolicyStatusReport",
    "PolicySelection",
    "PooledRate",
    "PreviousTest",
    "ProbeBaseline",
    "ProbeJudge",
    "ProbeResult",
    "ReferenceChoice",
    "ReferenceComparison",
    "ReliabilityPoint",
    "RenderedPrompt",
    "Result",
    "RESULTS",
    "RoutedItem",
    "RouteResult",
    "Run",
    "RunJudge",
    "RunRef",
    "RunRow",
    "RunRowJudge",
    "RunRowSystem",
    "RunSummary",
    "SCHEMA_VERSION",
    "schemas",
    "ShownCase",
    "ShownJudgment",
    "ShownRun",
    "ShowResult",
    "SplitResult",
    "SplitSide",
    "StratifiedEstimate",
    "StratumEstimate",
    "ThresholdCandidate",
    "ThresholdChoice",
    "TracesImport",
    "Transitions",
    "StudyRun",
    "Truth",
    "TunedEstimate",
    "Versions",
    "write_schemas",
]

RESULTS: tuple[type[Result], ...] = (
    Calibration,
    RunSummary,
    Comparison,
    EstimateResult,
    ProbeResult,
    RouteResult,
    AuditSample,
    AuditStatus,
    PolicyStatusReport,
    PlanResult,
    DriftResult,
    ShowResult,
    ExportResult,
    SplitResult,
    TracesImport,
    DryRun,
)
# The policy file and its test keep the exact keys their hash and readers expect (see _Loose).
POLICY_FILES: tuple[type[PolicyResult] | type[HoldoutTest], ...] = (PolicyResult, HoldoutTest)
#: Outputs that are a JSON list of parts (``juge runs --json``, ``juge prompt --json``), by schema name.
LISTS: dict[str, type[Part]] = {"runs": RunRow, "prompt": RenderedPrompt}


def schemas() -> dict[str, dict[str, Any]]:
    """The JSON Schema of every result file, by name (``docs/schema/<name>.json``)."""
    describe_fields()  # each field's docstring is its description
    out = {}
    for model in (*RESULTS, *POLICY_FILES, *LABEL_RESULTS):
        schema = model.model_json_schema(by_alias=True, mode="serialization")
        out[model.schema_name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    for name, part in LISTS.items():
        schema = TypeAdapter(list[part]).json_schema(by_alias=True, mode="serialization")  # type: ignore[valid-type]
        out[name] = {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}
    return out


def write_schemas(folder: str | Path) -> list[Path]:
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for name, schema in schemas().items():
        path = folder / f"{name}.json"
        path.write_text(json.dumps(schema, indent=2, sort_keys=True) + "\n", encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for written_path in write_schemas(sys.argv[1] if len(sys.argv) > 1 else "docs/schema"):
        print(f"wrote {written_path}")
