"""List and mapping arguments of the public API given as one string, the command line's form.

The rule: the Python API takes lists and mappings, never the CLI's text (``label_cols="r1,r2"`` would be
read letter by letter, ``scale="yes=PASS"`` fail deep inside). A string there is a TypeError naming the
argument and showing the value it should be, worked out by the parser the CLI uses for that text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Literal

Form = Literal["list", "mapping", "scale", "criteria"]


def refuse_text(name: str, value: Any, form: Form) -> None:
    """TypeError when `value` of argument `name` is a string where a list or mapping is expected."""
    if not isinstance(value, str | bytes):
        return
    wanted = {"list": "a list of strings", "mapping": "a dict", "scale": "a dict", "criteria": "a dict of lists"}[form]
    suggestion = _as_python(value, form) if isinstance(value, str) else None
    example = f": {name}={suggestion!r}" if suggestion else ""
    raise TypeError(f"{name} takes {wanted}, not a string (the command line's form){example}")


def _as_python(text: str, form: Form) -> Any:
    """The value `text` stands for on the command line, or None when it does not parse."""
    from juge.data.labels import parse_scale, split_list
    from juge.data.readers import parse_mapping
    from juge.errors import InputError

    parsers: dict[Form, Callable[[str], Any]] = {
        "list": split_list,
        "mapping": parse_mapping,
        "scale": parse_scale,
        "criteria": lambda t: {k: split_list(v) for k, _, v in [t.partition("=")]} if "=" in t else None,
    }
    try:
        return parsers[form](text) or None
    except (InputError, ValueError):
        return None
