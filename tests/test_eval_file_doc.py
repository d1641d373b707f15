"""docs/eval-file.md lists every key of the eval, judge and rubric files (issue 30: they were documented only in
a Python docstring); it is generated from the models that read the files, so it cannot drift."""

from __future__ import annotations

from pathlib import Path

import pytest

from juge.scaffold.keys import EVAL_TABLES, JUDGE_TABLES, bounds, eval_file_doc, type_name

DOC = Path(__file__).resolve().parents[1] / "docs" / "eval-file.md"


def test_the_committed_page_is_what_the_models_say() -> None:
    assert DOC.read_text(encoding="utf-8") == eval_file_doc(), (
        "docs/eval-file.md drifted from the models: run python -m juge.scaffold.keys docs/eval-file.md"
    )


@pytest.mark.parametrize("model", [m for _, _, m in EVAL_TABLES + JUDGE_TABLES], ids=lambda m: m.__name__)
def test_every_key_says_what_it_is(model) -> None:
    page = eval_file_doc()
    for name, info in model.model_fields.items():
        assert info.description, f"{model.__name__}.{name} has no docstring"
        assert f"| `{info.alias or name}` |" in page


def test_types_and_bounds_read_as_toml() -> None:
    from juge.config import EngineSpec, EvalSpec

    fields = EngineSpec.model_fields
    assert bounds(fields["concurrency"]) == "[1, 1024]"
    assert bounds(fields["timeout"]) == "(0, 3600]"
    assert type_name(fields["mode"].annotation) == '"online" or "batch"'
    assert type_name(EvalSpec.model_fields["sample"].annotation) == "integer, optional"
    assert type_name(EvalSpec.model_fields["checks"].annotation) == "list of tables"
