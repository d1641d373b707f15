"""A field's docstring is its description, read on demand (juge.parts.describe_fields) rather than by pydantic's
``use_attribute_docstrings`` at import, which cost every `juge run` tens of ms of start-up: the same
descriptions as pydantic's own reading of each class."""

from __future__ import annotations

from pydantic._internal._docs_extraction import extract_docstrings_from_cls

import juge.results  # noqa: F401  (every result model)
import juge.scaffold.keys  # noqa: F401  (every eval and judge file model)
from juge.parts import Documented, _attribute_docstrings, describe_fields


def _documented() -> list[type]:
    found, todo = [], [Documented]
    while todo:
        for sub in todo.pop().__subclasses__():
            found.append(sub)
            todo.append(sub)
    return found


def test_each_class_s_field_docstrings_are_those_pydantic_reads() -> None:
    models = _documented()
    assert len(models) > 100
    for model in models:
        assert _attribute_docstrings(model) == extract_docstrings_from_cls(model, use_inspect=True), model


def test_described_fields_carry_their_docstring_and_a_given_description_stays() -> None:
    from juge.config import EngineSpec
    from juge.runs.results import RunSummary

    describe_fields()
    assert EngineSpec.model_fields["concurrency"].description
    assert RunSummary.model_fields["n_cases"].description == _attribute_docstrings(RunSummary)["n_cases"]
    schema = RunSummary.model_json_schema(by_alias=True, mode="serialization")
    assert schema["properties"]["n_cases"]["description"] == RunSummary.model_fields["n_cases"].description
