"""Paths into nested fields, for every option that names a field (``--map``, ``--judgments-map``,
``--labels-nested``).

A path is keys joined by dots, ``[N]`` for one element of a list (from 0, ``[-1]`` the last), ``[]`` for
each element (the value is then a list), and double quotes around a key holding dots, spaces, brackets or
quotes (``\\"`` inside): ``results[0]."swap = False".winner``, ``sentences[].responses``. A field whose
whole name is the text (a column called ``a.b``) is read as that column first.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

from juge.errors import InputError

EACH = object()  # the step `[]`


class PathError(InputError):
    """A path that does not fit the value: the message says how far it resolved and what was there. The
    readers catch it and raise it again naming the file, line and option."""


@dataclass(frozen=True)
class FieldPath:
    text: str
    steps: tuple[str | int | object, ...]  # a key, an index, or EACH

    @property
    def first(self) -> str:
        """The top-level field the path starts at."""
        step = self.steps[0]
        return step if isinstance(step, str) else ""


def is_path(text: str) -> bool:
    """Whether `text` is more than a plain field name (it holds a dot, a bracket or a quote)."""
    return any(c in text for c in '.["')


def parse_path(text: str, option: str = "--map") -> FieldPath:
    """The steps of a path; a syntax error (an unclosed quote or bracket, an empty key) names the option."""
    steps: list[str | int | object] = []
    i, n = 0, len(text)

    def fail(why: str) -> InputError:
        return InputError(f"{option}: {text!r} is not a field path: {why} at character {i + 1}")

    expect_key = True
    while i < n:
        c = text[i]
        if c == "[":
            end = text.find("]", i)
            if end < 0:
                raise fail("an unclosed [")
            inside = text[i + 1 : end].strip()
            if inside == "":
                steps.append(EACH)
            else:
                try:
                    steps.append(int(inside))
                except ValueError:
                    raise fail(f"[{inside}] is not [N] or []") from None
            i = end + 1
            expect_key = False
        elif c == ".":
            if expect_key:
                raise fail("an empty key")
            i += 1
            expect_key = True
        elif c == '"':
            key, i = _quoted(text, i, fail)
            steps.append(key)
            expect_key = False
        else:
            if not expect_key:
                raise fail("a key must follow a dot")
            end = i
            while end < n and text[end] not in '.["':
                end += 1
            steps.append(text[i:end].strip())
            i = end
            expect_key = False
    if expect_key or not steps:
        raise fail("an empty key")
    return FieldPath(text, tuple(steps))


def _quoted(text: str, i: int, fail: Any) -> tuple[str, int]:
    out, i = [], i + 1
    while i < len(text):
        c = text[i]
        if c == "\\" and i + 1 < len(text):
            out.append(text[i + 1])
            i += 2
            continue
        if c == '"':
            return "".join(out), i + 1
        out.append(c)
        i += 1
    raise fail("an unclosed quote")


def _step_text(step: str | int | object) -> str:
    if step is EACH:
        return "[]"
    if isinstance(step, int):
        return f"[{step}]"
    key = str(step)
    return f'"{key}"' if any(c in key for c in '.[]" ') else key


def joined_path(steps: tuple[str | int | object, ...]) -> str:
    out = ""
    for step in steps:
        text = _step_text(step)
        out += text if (not out or text.startswith("[")) else "." + text
    return out


def resolve(value: Any, path: FieldPath) -> Any:
    """The value at `path` inside `value` (a row); ``[]`` gives a list, one entry per element. A null on the
    way gives None. A step that does not fit raises PathError saying how far the path resolved."""
    return _resolve(value, path.steps, 0, path)


def _resolve(value: Any, steps: tuple[str | int | object, ...], k: int, path: FieldPath) -> Any:
    while k < len(steps):
        if value is None:
            return None
        if isinstance(value, str) and value.lstrip()[:1] in ("{", "["):  # a CSV cell holding JSON
            try:
                value = json.loads(value)
            except ValueError:
                pass
        step = steps[k]
        done = joined_path(steps[:k]) or "the row"
        if step is EACH:
            if not isinstance(value, list):
                raise PathError(f"{done} is {_kind(value)}, not a list, so {_step_text(step)} does not apply")
            return [_resolve(v, steps, k + 1, path) for v in value]
        if isinstance(step, int):
            if not isinstance(value, list):
                raise PathError(f"{done} is {_kind(value)}, not a list, so [{step}] does not apply")
            if not -len(value) <= step < len(value):
                raise PathError(f"{done} has {len(value)} elements, so [{step}] is out of range")
            value = value[step]
        else:
            if not isinstance(value, dict):
                raise PathError(f"{done} is {_kind(value)}, not an object, so .{_step_text(step)} does not apply")
            if step not in value:
                keys = ", ".join(repr(key) for key in list(value)[:10]) + (", ..." if len(value) > 10 else "")
                raise PathError(f"{done} has no key {step!r} (keys: {keys or 'none'})")
            value = value[step]
        k += 1
    return value


def _kind(value: Any) -> str:
    if isinstance(value, dict):
        return "an object"
    if isinstance(value, list):
        return "a list"
    if isinstance(value, str):
        return f"the text {value[:40]!r}"
    return f"{type(value).__name__} {value!r}"
