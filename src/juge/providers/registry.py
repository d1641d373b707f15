"""Provider lookup by name: built-ins, then plugins from the `juge.providers` entry point group."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from importlib.metadata import entry_points
from typing import Any

from juge.providers.base import Provider

_BUILTIN: dict[str, str] = {
    "openai": "juge.providers.openai_compat:OpenAICompatProvider",
    "anthropic": "juge.providers.anthropic:AnthropicProvider",
    "replay": "juge.providers.replay:ReplayProvider",
    "scripted": "juge.providers.scripted:ScriptedProvider",
    "llamacpp": "juge.providers.llamacpp:LlamaCppProvider",
}
_REGISTERED: dict[str, Callable[..., Provider]] = {}


class UnknownProvider(ValueError):
    pass


def register_provider(name: str, factory: Callable[..., Provider]) -> None:
    """Make `factory(**options)` available as provider `name` (for tests and plugins)."""
    _REGISTERED[name] = factory


def _load(target: str) -> Callable[..., Provider]:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def make_provider(name: str, **options: Any) -> Provider:
    if name in _REGISTERED:
        return _REGISTERED[name](**options)
    if name in _BUILTIN:
        return _load(_BUILTIN[name])(**options)
    for ep in entry_points(group="juge.providers"):
        if ep.name == name:
            return ep.load()(**options)
    known = sorted({*_BUILTIN, *_REGISTERED})
    raise UnknownProvider(f"unknown provider {name!r}; known: {', '.join(known)}")
