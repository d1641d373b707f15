"""Provider lookup by name: built-ins, then plugins from the `juge.providers` entry point group."""

from __future__ import annotations

import importlib
from collections.abc import Callable, Mapping
from importlib.metadata import entry_points
from typing import Any

from juge.errors import InputError
from juge.providers.base import Provider, as_provider

_BUILTIN: dict[str, str] = {
    "openai": "juge.providers.fleet:openai_provider",  # one endpoint, or a fleet of them
    "azure": "juge.providers.azure:azure_provider",
    "anthropic": "juge.providers.anthropic:AnthropicProvider",
    "replay": "juge.providers.replay:ReplayProvider",
    "scripted": "juge.providers.scripted:ScriptedProvider",
    "llamacpp": "juge.providers.llamacpp:LlamaCppProvider",
    "litellm": "juge.providers.litellm:LiteLLMProvider",
}
_REGISTERED: dict[str, Callable[..., Any]] = {}


class UnknownProvider(InputError, ValueError):
    """A provider name that is neither built in nor registered."""


def register_provider(name: str, factory: Callable[..., Any]) -> None:
    """Make `factory(**options)` available as provider `name` (for tests and plugins); what it makes is
    used through `as_provider`, so it need not subclass Provider."""
    _REGISTERED[name] = factory


def _load(target: str) -> Callable[..., Provider]:
    module, _, attr = target.partition(":")
    factory: Callable[..., Provider] = getattr(importlib.import_module(module), attr)
    return factory


def make_provider(name: str, **options: Any) -> Provider:
    """Provider `name` built with `options`: a registered one, a built-in, or a `juge.providers` plugin.
    A plugin's class need not subclass Provider (see `as_provider`)."""
    if name in _REGISTERED:
        return as_provider(_REGISTERED[name](**options))
    if name in _BUILTIN:
        return _load(_BUILTIN[name])(**options)
    for ep in entry_points(group="juge.providers"):
        if ep.name == name:
            return as_provider(ep.load()(**options))
    known = sorted({*_BUILTIN, *_REGISTERED})
    raise UnknownProvider(f"unknown provider {name!r}; known: {', '.join(known)}")


def answering_model(name: str, options: Mapping[str, Any], requested: str) -> str:
    """The model provider `name` with `options` answers as when asked for `requested` (its class's
    `Provider.answers_as`; a registered factory or a plugin answers as the model requested). Builds
    nothing: a preview needs no key and loads no model."""
    factory: Any = _REGISTERED.get(name) or (_load(_BUILTIN[name]) if name in _BUILTIN else None)
    answers_as = getattr(factory, "answers_as", None)
    return str(answers_as(options, requested)) if callable(answers_as) else requested
