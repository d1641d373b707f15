"""Every key of every result file juge writes says what it is: a docstring under each field of the result models
(``use_attribute_docstrings``) becomes its description in ``docs/schema/*.json``."""

from __future__ import annotations

from typing import Any

from juge.results import schemas


def _undescribed(schema: dict[str, Any], where: str) -> list[str]:
    missing = []
    for name, prop in schema.get("properties", {}).items():
        if not prop.get("description"):
            missing.append(f"{where}.{name}")
    for name, sub in schema.get("$defs", {}).items():
        missing += _undescribed(sub, name)
    return missing


def test_every_field_of_every_result_file_has_a_description() -> None:
    missing = [m for name, schema in schemas().items() for m in _undescribed(schema, name)]
    assert missing == [], f"{len(missing)} fields without a docstring: {missing[:20]}"
