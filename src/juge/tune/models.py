"""Typed results of `juge tune` (written as tuned/tuning.json)."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

SCHEMA_VERSION = 2  # 2: kappa, failures caught, false flags, the ceiling and baselines; the measure
EstimateDict = dict[str, Any]  # {"value", "low", "high", "n"}, as every juge figure is written


class Caught(BaseModel):
    """A share with its count: failures caught (human FAIL votes the judge called FAIL) or false flags
    (human PASS votes it called FAIL), "caught k of n"."""

    model_config = ConfigDict(extra="forbid")
    k: int
    n: int
    rate: EstimateDict


class ReferenceRow(BaseModel):
    """A row beside the candidates that makes no call: the person-vs-person ceiling, or a trivial
    baseline (always PASS for PASS/FAIL, the longer answer for pairwise)."""

    model_config = ConfigDict(extra="forbid")
    name: str
    what: str
    agreement: EstimateDict
    kappa: EstimateDict | None = None
    failures_caught: Caught | None = None
    false_flags: Caught | None = None


class CandidateResult(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str
    what: str
    agreement: EstimateDict
    kappa: EstimateDict | None = None  # Cohen's kappa with each person (a missing verdict is a verdict of its own)
    failures_caught: Caught | None = None  # PASS/FAIL (and scores at the threshold)
    false_flags: Caught | None = None
    catches_enough: bool | None = None  # at least what one person catches of another's; None for pairwise
    difference_to_best: EstimateDict | None  # in the measure
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
    kappa: EstimateDict | None = None
    failures_caught: Caught | None = None
    false_flags: Caught | None = None
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
    measure: str = "agreement"  # what ranks the candidates and what in_sample/out_of_fold are: kappa or agreement
    n_items: int
    n_groups: int
    folds: int
    seed: int
    run_id: str
    candidates: list[CandidateResult]
    skipped: dict[str, str]
    ceiling: ReferenceRow | None = None  # person vs person on the same dev items
    baselines: list[ReferenceRow] = []
    failures_bar: float | None = None  # PASS/FAIL: what one person catches of another's FAIL votes on dev
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
