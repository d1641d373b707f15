"""Names a package imports on first use (PEP 562), so importing the package stays cheap; regular expressions
compiled on first use."""

from __future__ import annotations

import importlib
import re
import sys
from collections.abc import Callable, Mapping
from typing import Any, cast


def lazy_names(package: str, names: Mapping[str, str]) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """The ``__getattr__`` and ``__dir__`` of `package` that import each of `names` from its module (name ->
    module) the first time it is asked for, and keep it."""
    module = sys.modules[package]

    def __getattr__(name: str) -> Any:
        source = names.get(name)
        if source is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(source), name)
        setattr(module, name, value)
        return value

    def __dir__() -> list[str]:
        return sorted(set(vars(module)) | set(names))

    return __getattr__, __dir__


class _LazyPattern:
    """A regular expression compiled the first time it is used; then its methods are the compiled pattern's own
    (kept on the instance, so a later call costs what a call on the pattern does)."""

    _METHODS = ("search", "match", "fullmatch", "finditer", "findall", "sub", "subn", "split")

    def __init__(self, pattern: str, flags: int) -> None:
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:  # only for what the instance does not hold yet
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for method in self._METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def lazy_pattern(pattern: str, flags: int = 0) -> re.Pattern[str]:
    """``re.compile(pattern, flags)``, compiled on first use: a module of many patterns (the parsers') costs
    nothing to import, and a process compiles only those its judges' answers reach (~1 ms each for the long ones)."""
    return cast("re.Pattern[str]", _LazyPattern(pattern, flags))
