"""Typed results, as pydantic models.

# ---- policies (juge.policy; issue 14) ----------------------------------------------------------
A policy file is hashed (``policy_hash``) over the keys it was written with, so the models read it and
write back exactly those keys (``to_dict``: the fields that were set, and any key a model does not
declare), never coerce a number (an int stays an int) and never add ``schema_version`` to a file that had
none: a pairwise policy of schema 1 loads and writes back unchanged, its hash intact.
"""

from __future__ import annotations

from typing import Any, ClassVar, Literal

from pydantic import BaseModel, ConfigDict

Number = int | float


class _Loose(BaseModel):
    """Keeps unknown keys and writes back the keys it was given."""

    model_config = ConfigDict(extra="allow")

    def to_dict(self) -> dict[str, Any]:
        return self.model_dump(mode="json", exclude_unset=True)


class PolicyCategory(_Loose):
    """One category's decision on dev: the figures behind it and the reason in words."""

    template: str | None = None
    n_items: int | None = None
    n_with_verdict: int | None = None
    vs_people: dict[str, Any] | None = None
    ceiling: dict[str, Any] | None = None
    gap: Number | None = None
    decision: Literal["judge", "person"]
    reason: str
    too_few: str | None = None


class HoldoutRecord(_Loose):
    """One holdout test as the policy file keeps it, with the content fingerprints of the items it used."""

    test_id: str | None = None
    used_at: str
    split: str
    data_hash: str
    n_items: int
    forced: bool
    held: bool | None = None
    conclusion: str | None = None
    fingerprints_hash: str | None = None
    fingerprints: list[str] = []


class PolicyResult(_Loose):
    """A judge policy (``juge policy derive --json``) for a pairwise, PASS/FAIL or score judge: the judge, its
    template per category, which categories it decides alone and why, and the holdout tests it went through."""

    schema_name: ClassVar[str] = "policy"

    schema_version: int = 1  # a file without the key is schema 1 (pairwise only)
    kind: Literal["juge-policy"] = "juge-policy"
    format: int = 1
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    created_at: str | None = None
    juge_version: str | None = None
    rule: str
    margin: Number
    judge: str
    templates_by_category: dict[str, str] = {}
    judges: dict[str, dict[str, Any]] = {}
    dev: dict[str, Any] = {}
    selection: dict[str, Any] = {}
    reference: dict[str, Any] = {}
    categories: dict[str, PolicyCategory] = {}
    guarantee: dict[str, Any] | None = None
    audit: dict[str, Any] = {}
    bootstrap: dict[str, Any] = {}
    threshold: Number | None = None
    min_recall: Number | None = None
    policy_hash: str
    holdout_tests: list[HoldoutRecord] = []

    def judge_decides(self, category: str) -> bool:
        """Whether the judge decides this category alone (rule 3)."""
        row = self.categories.get(category)
        return row is not None and row.decision == "judge"

    @property
    def tested(self) -> bool:
        """Whether the policy file records a holdout test."""
        return bool(self.holdout_tests)


class Conclusion(_Loose):
    """Whether the policy held on holdout, and why (``held`` None: untested)."""

    held: bool | None = None
    reason: str


class CategoryConclusion(Conclusion):
    dev_decision: Literal["judge", "person"] = "person"
    dev_gap: Number | None = None
    holdout_gap: Number | None = None
    holdout_decision: str | None = None
    holdout_reason: str | None = None


class PreviousTest(_Loose):
    """An earlier test that used some of these items, and where it was found."""

    test_id: str | None = None
    used_at: str
    policy_hash: str
    forced: bool
    shared_items: int = 0
    shared_groups: int = 0
    found_in: list[str] = []


class HoldoutCategory(_Loose):
    n_items: int | None = None
    judge_decides: dict[str, Any] | None = None
    decisions: dict[str, int] = {}
    conclusion: CategoryConclusion | None = None


class HoldoutTest(_Loose):
    """The one test of a policy on held-out items (``juge policy test --json``): decisions, figures and the
    conclusion per category and overall; ``forced`` (FORCED) when the items were tested before."""

    schema_name: ClassVar[str] = "policy_test"

    schema_version: int = 2
    kind: Literal["juge-policy-test"] = "juge-policy-test"
    test_id: str | None = None
    tested_at: str | None = None
    policy_hash: str
    judge_kind: Literal["pairwise", "passfail", "score"] = "pairwise"
    rule: str | None = None
    margin: Number | None = None
    split: str
    data_hash: str
    forced: bool = False
    previous_uses: list[PreviousTest] = []
    warning: str | None = None
    n_items: int | None = None
    decisions: dict[str, int] = {}
    judge_decides: dict[str, Any] | None = None
    conclusion: Conclusion | None = None
    per_category: dict[str, HoldoutCategory] = {}
    items: list[dict[str, Any]] = []
    guarantee: dict[str, Any] | None = None

    @property
    def held(self) -> bool | None:
        return None if self.conclusion is None else self.conclusion.held
