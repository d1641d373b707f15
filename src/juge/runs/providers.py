"""Who answers a run: one provider instance per configuration, and each judge's provider.

The command line's provider applies to every judge; else a judge's own (its file's ``provider``), else
the eval file's ``[provider]``. A provider may answer as its own model (the eval's scripted stand-in):
the model a run records is the one that answers.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from pathlib import Path
from typing import Any

from juge.config import EvalConfig, ProviderSpec
from juge.errors import InputError
from juge.judges.judge import Judge
from juge.providers import ProviderError, make_provider
from juge.providers.base import Provider
from juge.providers.registry import answering_model


class Providers:
    """One provider instance per distinct (name, options), built lazily."""

    def __init__(self, default: ProviderSpec | None, base_dir: Path):
        self.default = default
        self.base_dir = base_dir
        self._made: dict[str, Provider] = {}

    def get(self, spec: ProviderSpec | dict[str, Any] | None) -> Provider:
        spec = self.default if spec is None else (spec if isinstance(spec, ProviderSpec) else ProviderSpec(**spec))
        if spec is None:
            raise InputError(
                'no provider configured: name one in the judge file (provider = "openai"), in the eval '
                "file ([provider] name = ...), or with --provider"
            )
        # A judge or system naming the eval's provider without options of its own uses the eval's
        # options (its base_url above all): never silently fall back to a provider's default endpoint.
        same = self.default is not None and spec.name == self.default.name
        options = dict(spec.options or (self.default.options if same and self.default else {}))
        if spec.name == "replay" and "path" in options:
            options["path"] = str((self.base_dir / options["path"]).resolve())
        key = json.dumps([spec.name, options], sort_keys=True, default=str)
        if key not in self._made:
            try:
                provider = make_provider(spec.name, **options)
                # The cache must tell apart two configurations of one provider (another scripted
                # rule, another endpoint): its key carries a hash of the options. The HTTP client
                # (`http`) changes how the answer travels, not the answer: it is left out.
                answer_key = json.dumps(
                    [spec.name, {k: v for k, v in options.items() if k != "http"}], sort_keys=True, default=str
                )
                provider.cache_identity = f"{provider.name}#{hashlib.sha256(answer_key.encode()).hexdigest()[:12]}"
                self._made[key] = provider
            except (TypeError, ProviderError, ValueError) as exc:
                hint = " (check the option names)" if isinstance(exc, TypeError) else ""
                bad = InputError(f"provider {spec.name!r}: {exc}{hint}")
                # the options were refused, not the name (an unknown name is an InputError too): the caller says
                bad.field = "name" if isinstance(exc, InputError) else "options"
                raise bad from None
        return self._made[key]

    async def aclose(self) -> None:
        """Close the providers that hold connections: they belong to the event loop that used them."""
        for provider in self._made.values():
            await provider.aclose()


def provider_for(
    providers: Providers, config: EvalConfig, override: ProviderSpec | None, own: ProviderSpec | None, judge: int | None
) -> Provider:
    """The provider that answers: the command line's, else judge `judge`'s (None: the system's) own,
    else the eval's.

    A bad one is an error naming the file and field that chose it (the command line's names itself).
    """
    if override is not None:
        return providers.get(override)
    try:
        return providers.get(own)
    except InputError as exc:
        if own is None:
            raise config.error(str(exc), f"provider.{exc.field or 'name'}") from None
        if judge is None:
            raise config.error(str(exc), "system.provider") from None
        raise config.judge_error(judge, str(exc), "provider") from None


def answering_judges(config: EvalConfig, override: ProviderSpec | None = None) -> list[Judge]:
    """The eval's judges with the model that answers for each (the provider that answers may answer as
    its own model, as the eval's scripted stand-in does): what a run records and a preview shows. The
    requests still carry each judge's own model."""
    out = []
    for judge, spec in zip(config.judges, judge_specs(config, override)):
        model = answering_model(spec.name, spec.options, judge.model) if spec is not None else judge.model
        out.append(as_model(judge, model))
    return out


def judge_specs(config: EvalConfig, override: ProviderSpec | None = None) -> list[ProviderSpec | None]:
    """The provider that answers each of the eval's judges: the override, else its own file's, else the eval's."""
    return [override or judge_provider_spec(judge) or config.spec.provider for judge in config.judges]


def as_model(judge: Judge, model: str) -> Judge:
    """`judge` recorded as answered by `model` (itself when that is its own model)."""
    return judge if model == judge.model else dataclasses.replace(judge, model=model)


def judge_provider_spec(judge: Judge) -> ProviderSpec | None:
    """The provider a judge's own file names (with its options), or None."""
    p = judge.provider
    if p is None:
        return None
    if isinstance(p, str):
        return ProviderSpec(name=p, options=dict(judge.provider_options or {}))
    return ProviderSpec(**p)
