"""The base of every typed result: a :class:`Part` of a result and a whole :class:`Result` file.

The docstring under a field is its description (in the JSON schemas and the eval file's key tables), read when a
schema or a document asks for it (:func:`describe_fields`), not when the model is made: pydantic's
``use_attribute_docstrings`` reads each class's source at import, which cost every `juge run` tens of ms of
start-up for models it never describes.

A result remembers which keys it was built or loaded with, and ``to_dict()`` writes exactly those (so an older
file read and written again keeps its shape); keys a model does not declare are kept too (``extra="allow"``).
``to_dict()`` is what the CLI's ``--json`` writes. Every result file carries ``schema_version``.
"""

from __future__ import annotations

import ast
import functools
import html
import inspect
import json
import sys
from pathlib import Path
from typing import Any, ClassVar, Self

from pydantic import BaseModel, ConfigDict, ValidationError

from juge.errors import input_error, validation_error
from juge.files import read_json_object, write_json
from juge.visible import visible_text

REPR_FIELDS = 6  # fields a result's repr shows before "…": a notebook cell stays one line, not a 3,000-char dump
BRIEF = 80  # characters of a text value shown in a repr or a notebook table

SCHEMA_VERSION = 1


def check_schema_version(data: dict[str, Any], source: str | Path, what: str) -> None:
    """Refuse a result file written by a newer juge (as the stores refuse a newer schema): its keys may mean
    something this version does not know."""
    version = data.get("schema_version", 1)
    if isinstance(version, int) and not isinstance(version, bool) and version > SCHEMA_VERSION:
        raise input_error(
            source,
            f"{what} schema_version {version}; this juge reads up to {SCHEMA_VERSION} (upgrade juge)",
            field="schema_version",
        )


class Documented(BaseModel):
    """A model whose fields' docstrings become their descriptions on :func:`describe_fields`."""

    @classmethod
    def __pydantic_init_subclass__(cls, **kwargs: Any) -> None:
        super().__pydantic_init_subclass__(**kwargs)
        _UNDESCRIBED.append(cls)


_UNDESCRIBED: list[type[BaseModel]] = []  # Documented models not described yet, in the order they were made


def describe_fields() -> None:
    """Give the fields of every :class:`Documented` model made so far the description their docstring writes,
    as ``use_attribute_docstrings`` would have at import (a field's docstring is that of the class that annotates
    it; a description given with ``Field`` stays), and rebuild the models so their JSON schemas carry it."""
    if not _UNDESCRIBED:
        return
    models = list(_UNDESCRIBED)
    del _UNDESCRIBED[:]
    for model in models:
        docs: dict[str, str | None] = {}
        for klass in reversed(model.__mro__):
            if issubclass(klass, Documented) and klass is not Documented:
                own = _attribute_docstrings(klass)
                docs.update({name: own.get(name) for name in klass.__dict__.get("__annotations__", {})})
        for name, info in model.model_fields.items():
            if info.description is None and docs.get(name):
                info.description = docs[name]
    # Twice: a model reuses the schema its parts had when it is rebuilt, and a part may be made after a model
    # that holds it (a forward reference).
    for model in [*models, *models]:
        model.model_rebuild(force=True)


def _attribute_docstrings(cls: type) -> dict[str, str]:
    """{field: the string literal right under its annotation} in the class's own source."""
    return _module_docstrings(cls.__module__).get(cls.__qualname__, {})


@functools.cache
def _module_docstrings(module: str) -> dict[str, dict[str, str]]:
    """{class qualname: its attribute docstrings} of a module, from one reading of its source."""
    try:
        tree = ast.parse(inspect.getsource(sys.modules[module]))
    except (KeyError, OSError, TypeError, SyntaxError):  # no source (an interactive session): no descriptions
        return {}
    found: dict[str, dict[str, str]] = {}

    def visit(nodes: list[ast.stmt], prefix: str) -> None:
        for node in nodes:
            if isinstance(node, ast.ClassDef):
                name = prefix + node.name
                found[name] = {
                    before.target.id: inspect.cleandoc(after.value.value)
                    for before, after in zip(node.body, node.body[1:])
                    if isinstance(before, ast.AnnAssign)
                    and isinstance(before.target, ast.Name)
                    and isinstance(after, ast.Expr)
                    and isinstance(after.value, ast.Constant)
                    and isinstance(after.value.value, str)
                }
                visit(node.body, name + ".")
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(node.body, f"{prefix}{node.name}.<locals>.")

    visit(tree.body, "")
    return found


class Shown(Documented):
    """How a result shows in a terminal (a short repr) and a notebook (an HTML table); every result has it."""

    def _shown(self) -> list[tuple[str, Any]]:
        """The fields worth showing: those set, in the model's order (empty lists and dicts and None left out)."""
        return [
            (name, value)
            for name in type(self).model_fields
            if name in self.model_fields_set
            and name != "schema_version"  # the file's layout, not the result
            and (value := getattr(self, name)) is not None
            and not (isinstance(value, (list, dict)) and not value)
        ]

    def __repr__(self) -> str:
        shown = self._shown()
        parts = [f"{name}={_brief(value, nested=True)}" for name, value in shown[:REPR_FIELDS]]
        more = ", …" if len(shown) > REPR_FIELDS else ""
        return f"{type(self).__name__}({', '.join(parts)}{more})"

    def _repr_html_(self) -> str:
        """A notebook's view: one row per field, nested results and long values shortened, every text escaped
        with its hidden characters made visible (model output is untrusted)."""
        rows = "".join(
            f"<tr><th style='text-align:left'>{html.escape(name)}</th><td>{html.escape(_brief(value))}</td></tr>"
            for name, value in self._shown()
        )
        headline = self._headline()
        said = f": {html.escape(visible_text(headline))}" if headline else ""
        return f"<p><b>juge {html.escape(type(self).__name__)}</b>{said}</p><table>{rows}</table>"

    def _headline(self) -> str | None:
        """The one line a reader wants first (a pass rate, a verdict); None where the fields say it."""
        return None


class Part(Shown):
    """A piece of a result: keeps unknown keys, writes back the keys it was given."""

    # defer_build: a result's validator is built when it is first used, so a run does not pay at start-up for the
    # dozens of result models it never makes (nor their fields' docstrings: see describe_fields).
    model_config = ConfigDict(extra="allow", populate_by_name=True, defer_build=True)

    def to_dict(self) -> dict[str, Any]:
        """The JSON shape of this part (the keys it was built or loaded with, in the model's order)."""
        return self.model_dump(mode="json", exclude_unset=True, by_alias=True)

    # Read access as in the JSON (``result["judges"]``), for code written against the dicts.
    def _field(self, key: str) -> str | None:
        fields = type(self).model_fields
        if key in fields and fields[key].alias in (None, key):
            return key
        alias = next((name for name, f in fields.items() if f.alias == key), None)
        if alias is not None:
            return alias
        return key if key in (self.model_extra or {}) else None

    def __getitem__(self, key: str) -> Any:
        name = self._field(key)
        if name is None or name not in self.model_fields_set | set(self.model_extra or {}):
            raise KeyError(key)
        return self.model_dump(mode="json", include={name}, exclude_unset=True, by_alias=True)[key]

    def __contains__(self, key: object) -> bool:
        name = self._field(key) if isinstance(key, str) else None
        return name is not None and name in self.model_fields_set | set(self.model_extra or {})

    def get(self, key: str, default: Any = None) -> Any:
        return self[key] if key in self else default


def _brief(value: Any, *, nested: bool = False) -> str:
    """A value in a few characters: a nested result as its short repr (or its class name inside a repr), a
    list or dict by its size, a text cut at BRIEF characters with hidden characters shown."""
    if isinstance(value, Part):
        return f"{type(value).__name__}(…)" if nested else repr(value)
    if isinstance(value, list):
        return f"[{len(value)} item{'s' if len(value) != 1 else ''}]"
    if isinstance(value, dict):
        scalar = all(isinstance(v, (int, float, str, bool)) for v in value.values())
        shown = [f"{k}: {v}" if scalar else str(k) for k, v in list(value.items())[:4]]
        text = visible_text(", ".join(shown) + (", …" if len(value) > 4 else ""))
        return "{" + (text if len(text) <= BRIEF else text[: BRIEF - 1] + "…") + "}"
    text = visible_text(repr(value) if isinstance(value, str) and nested else str(value))
    return text if len(text) <= BRIEF else text[: BRIEF - 1] + "…"


class Result(Part):
    """A whole result file: a ``schema_version`` first, ``load``/``save``, ``to_dict`` for ``--json``."""

    schema_name: ClassVar[str] = "result"
    schema_version: int = SCHEMA_VERSION
    """The version of the file's layout: a juge that reads an older one reads it, a newer one is refused."""

    def to_dict(self) -> dict[str, Any]:
        return {"schema_version": self.schema_version, **super().to_dict()}

    def to_json(self, indent: int | None = 1) -> str:
        return json.dumps(self.to_dict(), ensure_ascii=False, indent=indent)

    @classmethod
    def load(cls, path: str | Path) -> Self:
        """Read a result file written by juge (any earlier version: keys it lacks stay unset); a file that is
        not one is an :class:`~juge.errors.InputError` naming the file and the dotted field."""
        return cls.from_json(read_json_object(path, cls.schema_name.replace("_", " ")), path)

    @classmethod
    def from_json(cls, data: dict[str, Any], source: str | Path) -> Self:
        """The result in `data` (a result file's JSON, read from `source`), checked field by field."""
        check_schema_version(data, source, cls.schema_name.replace("_", " "))
        try:
            return cls.model_validate(data)
        except ValidationError as exc:
            raise validation_error(source, exc) from None

    def save(self, path: str | Path) -> Path:
        """Write the result atomically as the CLI's ``--json`` does."""
        return write_json(Path(path), self.to_dict())
