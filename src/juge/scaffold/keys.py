"""docs/eval-file.md: every key of the eval, judge and rubric files, written from the models that read them.

The page is generated, so it cannot drift from what juge accepts (a test compares it with the committed file)::

    python -m juge.scaffold.keys docs/eval-file.md
"""

from __future__ import annotations

import inspect
import sys
import types
import typing
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from pydantic.fields import FieldInfo
from pydantic_core import PydanticUndefined

from juge.checks import _FACTORIES, BUILTIN_KINDS
from juge.config import EngineSpec, EvalSpec, GateSpec, LimitSpec, PanelFileSpec, PanelSpec, ProviderSpec, SystemSpec
from juge.judges.judge import JudgeSpec
from juge.judges.rubric import Criterion, Example, Rubric
from juge.parts import describe_fields

INTRO = """# The eval, judge and rubric files

Every key juge reads from the TOML files you write, with its type, default, bounds and meaning. This page is
generated from the models that read the files (`python -m juge.scaffold.keys docs/eval-file.md`), so it lists
exactly what juge accepts; an unknown key is an error that names its file, line and the closest known key.
The README's tour shows each file in use; `juge init` writes a project with all three.
"""

# (heading, where the table sits in the file, model)
EVAL_TABLES: list[tuple[str, str, type[BaseModel]]] = [
    ("The eval file", "top level", EvalSpec),
    ("`[provider]`", "the default provider (also `[system.provider]` and a judge's `provider` table)", ProviderSpec),
    ("`[system]`", "a system under test that writes the outputs", SystemSpec),
    ("`[engine]`", "how calls are made", EngineSpec),
    ('`[engine.limits."NAME"]`', "a rate budget for one provider or model name", LimitSpec),
    ("`[gate]`", "when `juge run` exits 1", GateSpec),
    (
        "`[[panels]]`",
        "judges of this eval file voting as one judge `NAME/AGGREGATE` (a jury): `juge run` calls the members and "
        "stores the panel's verdicts beside theirs, its model listing them, its tokens and cost their sum",
        PanelSpec,
    ),
]
JUDGE_TABLES: list[tuple[str, str, type[BaseModel]]] = [
    ("The judge file", "a `judges/*.toml` file, or a `[[judges]]` table of the eval file", JudgeSpec),
    (
        "The rubric",
        'a rubric file (`rubric = "rubric.toml"`), a `[rubric]` table, or these keys at the top level of a judge file',
        Rubric,
    ),
    ("`[criteria.NAME]`", "one criterion of a criteria judge", Criterion),
    ("`[[examples]]`", "a worked example (few-shot)", Example),
    (
        "The panel file",
        "a judge file whose `[[members]]` vote as one judge `NAME/AGGREGATE`, named like a judge file "
        '(`[[judges]] file = "jury.toml"`, `juge run --judge jury.toml`); the members are judges of the run',
        PanelFileSpec,
    ),
]


def type_name(annotation: Any) -> str:
    """A field's type as a reader writes it in TOML terms (`int | None` -> `int, optional`)."""
    origin = typing.get_origin(annotation)
    if origin in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        inner = " or ".join(type_name(a) for a in args)
        return inner + (", optional" if len(args) < len(typing.get_args(annotation)) else "")
    if origin is typing.Literal:
        return " or ".join(f'"{a}"' if isinstance(a, str) else str(a) for a in typing.get_args(annotation))
    if origin is typing.Annotated:
        return type_name(typing.get_args(annotation)[0])
    if origin in (list, tuple):
        items = typing.get_args(annotation)
        if origin is tuple and items and items[-1] is not Ellipsis:
            return "[" + ", ".join(type_name(a) for a in items) + "]"
        return f"list of {_plural(type_name(items[0]))}" if items else "list"
    if origin is dict:
        value = (typing.get_args(annotation) or (str, Any))[1]
        return "table" if value is Any else f"table of {_plural(type_name(value))}"
    if isinstance(annotation, type) and issubclass(annotation, BaseModel):
        return "table"
    if annotation is Any:
        return "any"
    names = {str: "text", int: "integer", float: "number", bool: "true or false"}
    if annotation in names:
        return names[annotation]
    return getattr(annotation, "__name__", str(annotation))


def _plural(name: str) -> str:
    return {"table": "tables", "text": "texts", "integer": "integers", "number": "numbers"}.get(name, name)


def bounds(info: FieldInfo) -> str:
    """A field's bounds from its constraints: `[1, 1024]`, `(0, 3600]`, `at least 1 character`."""
    low = high = None
    for m in info.metadata:
        for attr, side, closed in (
            ("ge", "low", True),
            ("gt", "low", False),
            ("le", "high", True),
            ("lt", "high", False),
        ):
            value = getattr(m, attr, None)
            if value is not None:
                if side == "low":
                    low = ("[" if closed else "(") + f"{value:g}"
                else:
                    high = f"{value:g}" + ("]" if closed else ")")
        if n := getattr(m, "min_length", None):
            return "not empty" if n == 1 else f"at least {n} entries"
    if low and high:
        return f"{low}, {high}"
    if low:
        return f"{'at least' if low[0] == '[' else 'above'} {low[1:]}"
    if high:
        return f"{'at most' if high[-1] == ']' else 'below'} {high[:-1]}"
    return ""


def default(info: FieldInfo) -> str:
    if info.default_factory is not None:
        value = info.default_factory()  # type: ignore[call-arg]
        return "" if value in ({}, []) or isinstance(value, BaseModel) else f"`{value}`"  # a table: its keys below
    if info.default is PydanticUndefined:
        return "**required**"
    if info.default is None:
        return ""
    if isinstance(info.default, bool):
        return f"`{str(info.default).lower()}`"
    if isinstance(info.default, str):
        return f'`"{info.default}"`'
    return f"`{info.default}`"


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def model_table(model: type[BaseModel]) -> str:
    describe_fields()  # each key's docstring is what it is
    rows = ["| key | type | default | bounds | what it is |", "|---|---|---|---|---|"]
    for name, info in model.model_fields.items():
        rows.append(
            f"| `{info.alias or name}` | {_cell(type_name(info.annotation))} | {default(info)} | {bounds(info)} | "
            f"{_cell(info.description or '')} |"
        )
    return "\n".join(rows)


def checks_table() -> str:
    rows = ["| kind | options | what passes |", "|---|---|---|"]
    for kind in BUILTIN_KINDS:
        factory = _FACTORIES[kind]
        options = []
        for p in inspect.signature(factory).parameters.values():
            if p.kind is not inspect.Parameter.KEYWORD_ONLY or p.name == "base_dir":
                continue
            options.append(f"`{p.name}`" + ("" if p.default is inspect.Parameter.empty else " (optional)"))
        doc = (inspect.getdoc(factory) or "").split("\n")[0]
        rows.append(f"| `{kind}` | {', '.join(options) or '-'} | {_cell(doc)} |")
    return "\n".join(rows)


def eval_file_doc() -> str:
    """The Markdown of docs/eval-file.md."""
    parts = [INTRO]
    for title, where, model in EVAL_TABLES:
        parts += [f"## {title}", f"{where[0].upper()}{where[1:]}.", model_table(model)]
    parts += [
        "## `[[checks]]`",
        "A deterministic check, the cheapest grader: its `kind`, an optional `name` (default: the kind; "
        "reports and `juge show` use it) and the kind's options. A failed check fails the case whatever a "
        'judge says. `@juge.checks.register_check("name")` adds a kind of your own.',
        checks_table(),
    ]
    for title, where, model in JUDGE_TABLES:
        parts += [f"## {title}", f"{where[0].upper()}{where[1:]}.", model_table(model)]
    return "\n\n".join(parts) + "\n"


def write_eval_file_doc(target: str | Path = "docs/eval-file.md") -> Path:
    path = Path(target)
    path.write_text(eval_file_doc(), encoding="utf-8")
    return path


if __name__ == "__main__":
    print(f"wrote {write_eval_file_doc(*sys.argv[1:2])}")
