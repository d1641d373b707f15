"""Rubrics: what a judge looks for, in words the template puts in front of the model.

A rubric names one property or criterion and describes it. Depending on the
judge's setup it also carries described score levels (score), a list of items
worth one point each (additive), or several criteria each with its own levels
(criteria). Few-shot examples show the exact answer format; each example's
`judgment` must itself pass the judge's strict parser (checked on load).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import ConfigDict, Field, ValidationError, field_validator

from juge.errors import InputError, parse_toml, validation_error
from juge.parts import Documented


def _int_levels(levels: Any) -> Any:
    """TOML table keys are strings: {"1": "..."} -> {1: "..."}; levels must be consecutive integers."""
    if not isinstance(levels, dict):
        return levels
    out: dict[int, Any] = {}
    for key, text in levels.items():
        try:
            out[int(key)] = text
        except (TypeError, ValueError):
            raise ValueError(f"level {key!r} is not an integer") from None
    if out:
        keys = sorted(out)
        if keys != list(range(keys[0], keys[-1] + 1)):
            raise ValueError(f"levels must be consecutive integers, got {keys}")
    return dict(sorted(out.items()))


class Criterion(Documented):
    model_config = ConfigDict(extra="forbid", frozen=True)
    description: str = Field(min_length=1)
    """What this criterion asks, in words."""
    levels: dict[int, str] | None = None
    """The criterion's described levels (consecutive integers)."""

    @field_validator("levels", mode="before")
    @classmethod
    def _levels_are_integers(cls, value: Any) -> Any:
        return _int_levels(value)


class Example(Documented):
    """A worked example: the data shown to the judge and the exact answer it should give."""

    model_config = ConfigDict(extra="forbid", frozen=True)
    question: str | None = None
    """The example's question."""
    context: str | None = None
    """The example's context (the facts an answer must rest on)."""
    reference: str | None = None
    """The example's reference answer."""
    response: str | None = None
    """The answer judged (passfail, score, criteria, additive)."""
    response_a: str | None = None
    """pairwise: the answer shown as A."""
    response_b: str | None = None
    """pairwise: the answer shown as B."""
    judgment: str = Field(min_length=1)
    """The exact answer the judge should give, in its setup's format."""


class Rubric(Documented):
    model_config = ConfigDict(extra="forbid", frozen=True)
    name: str = Field(min_length=1)
    """The property's name, shown to the judge and the raters."""
    description: str = Field(min_length=1)
    """What the judge decides, in words: the heart of the rubric."""
    levels: dict[int, str] | None = None
    """score: the described levels, `{ 1 = "...", 2 = "..." }` (consecutive integers)."""
    items: list[str] | None = None
    """additive: the items, one point each."""
    criteria: dict[str, Criterion] | None = None
    """criteria: a table per criterion, with its description (and levels)."""
    examples: list[Example] = Field(default_factory=list)
    """Worked examples (few-shot), each an `[[examples]]` table."""

    @field_validator("levels", mode="before")
    @classmethod
    def _levels_are_integers(cls, value: Any) -> Any:
        return _int_levels(value)

    @field_validator("items")
    @classmethod
    def _items_non_empty(cls, items: list[str] | None) -> list[str] | None:
        if items is not None and (not items or not all(item.strip() for item in items)):
            raise ValueError("items must be a non-empty list of non-empty strings")
        return items

    @field_validator("criteria")
    @classmethod
    def _criteria_non_empty(cls, criteria: dict[str, Criterion] | None) -> dict[str, Criterion] | None:
        if criteria is not None and not criteria:
            raise ValueError("criteria must name at least one criterion")
        return criteria


def rubric_from_dict(data: dict[str, Any], source: str | Path, prefix: str = "rubric") -> Rubric:
    try:
        return Rubric.model_validate(data)
    except ValidationError as exc:
        raise validation_error(source, exc, prefix=prefix) from None


def read_toml(path: Path) -> dict[str, Any]:
    """Read a TOML file, turning every failure into an InputError naming the file."""
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    return parse_toml(path, path.read_bytes())[0]


def load_rubric(path: str | Path) -> Rubric:
    path = Path(path)
    return rubric_from_dict(read_toml(path), path, prefix="")
