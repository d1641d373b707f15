"""Where a judge's calls go when the caller names it (`--base-url`, `--api-key-env`, `--model`): the
provider spec those make, and judges with another model."""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from juge.config import ProviderSpec
from juge.errors import InputError

if TYPE_CHECKING:
    from juge.judges.judge import Judge

_TAKES_ENDPOINT = ("openai", "anthropic")
_NO_ENDPOINT = ("scripted", "replay", "llamacpp")


def provider_override(
    provider: str | None, base_url: str | None, api_key_env: str | None, options: dict[str, Any] | None = None
) -> ProviderSpec | None:
    """The provider the command line names, with its endpoint options; None when it names none."""
    if (base_url or api_key_env) and provider is None:
        provider = "openai"
    if provider is None:
        return None
    if (base_url or api_key_env) and provider in _NO_ENDPOINT:
        raise InputError(
            f"--base-url and --api-key-env work with the {' and '.join(_TAKES_ENDPOINT)} providers, not {provider!r}"
        )
    opts = dict(options or {})
    if base_url:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(f"--base-url {base_url}: give an http:// or https:// address")
        opts["base_url"] = base_url
    if api_key_env:
        opts["api_key_env"] = api_key_env
    return ProviderSpec(name=provider, options=opts)


def with_model(judges: Sequence[Judge], model: str | None) -> list[Judge]:
    """`judges` with `model` in place of each one's own (the version hash does not change: the model
    is recorded beside it)."""
    if not model:
        return list(judges)
    return [dataclasses.replace(j, model=model) for j in judges]
