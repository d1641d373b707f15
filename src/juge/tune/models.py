"""Typed results of `juge tune` (written as tuned/tuning.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 1
EstimateDict = dict[str, Any]  # {"value", "low", "high", "n"}, as every juge figure is written


class CandidateResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    what: str
    agreement: EstimateDict
    difference_to_best: EstimateDict | None
    within_noise: bool
    decision: str
    calls: int
    outcomes: dict[str, int]
    tokens: int
    cost_unit: str  # "USD" when every call had a price, else "tokens"
    cost_per_item: float
    latency_mean: float | None


class HoldoutFigure(BaseModel):
    model_config = ConfigDict(extra="forbid")
    agreement: EstimateDict
    n_items: int
    run_id: str
    forced: bool = False


class TuneResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    schema_version: int = SCHEMA_VERSION
    report: Literal["tune"] = "tune"  # the report template `juge.reports` renders it with
    judge: str
    setup: str
    metric: str
    n_items: int
    n_groups: int
    folds: int
    seed: int
    run_id: str
    candidates: list[CandidateResult]
    skipped: dict[str, str]
    best: str
    chosen: str
    reason: str
    in_sample: EstimateDict
    out_of_fold: EstimateDict
    optimism: float | None
    chosen_per_fold: list[str | None]
    tuned_template_hash: str
    provenance: dict[str, Any]
    holdout: HoldoutFigure | None = None

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
