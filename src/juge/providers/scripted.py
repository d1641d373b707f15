"""A deterministic provider for tests and offline examples.

Answers come from rules matched against the last user message (first match wins),
then `default`. With neither, the call fails: a scripted provider never makes up
an answer. `fail` injects errors for retry tests: `{"status": 429, "times": 2}`
fails the first two calls of each distinct prompt with that status.
"""

from __future__ import annotations

import asyncio
import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from typing import Any

from juge.providers.base import Provider, ProviderError, Request, Response

DEFAULT_MODEL = "scripted-1"


class ScriptedProvider(Provider):
    name = "scripted"

    def __init__(
        self,
        *,
        responses: Sequence[Mapping[str, Any]] = (),
        default: str | None = None,
        model: str = DEFAULT_MODEL,
        fn: Callable[[Request], str | Response] | None = None,
        fail: Mapping[str, int] | None = None,
        delay: float = 0.0,
    ):
        self.rules = [(re.compile(r["match"], re.S), r) for r in responses]
        self.default = default
        self.model = model
        self.fn = fn
        self.fail = dict(fail or {})
        self.delay = delay
        self.calls = 0
        self._attempts: Counter[str] = Counter()

    @classmethod
    def answers_as(cls, options: Mapping[str, Any], requested: str) -> str:
        # A stand-in answers as its own model whatever the judge asks for.
        return str(options.get("model", DEFAULT_MODEL))

    def answering_model(self, requested: str) -> str:
        return self.model

    async def complete(self, request: Request) -> Response:
        self.calls += 1
        if self.delay:
            await asyncio.sleep(self.delay)
        prompt = request.messages[-1]["content"] if request.messages else ""
        if self.fail:
            key = "\n".join(m["content"] for m in request.messages)
            self._attempts[key] += 1
            if self._attempts[key] <= self.fail.get("times", 0):
                status = int(self.fail.get("status", 500))
                raise ProviderError(f"injected HTTP {status}", retryable=status == 429 or status >= 500, status=status)
        if self.fn is not None:
            out = self.fn(request)
            return out if isinstance(out, Response) else self._response(out, prompt)
        for rx, rule in self.rules:
            if rx.search(prompt):
                return self._response(rule.get("text", ""), prompt, refused=bool(rule.get("refused", False)))
        if self.default is not None:
            return self._response(self.default, prompt)
        raise ProviderError("scripted provider has no rule for this prompt and no default")

    def _response(self, text: str, prompt: str, refused: bool = False) -> Response:
        return Response(
            text=text,
            model=self.model,
            tokens_in=len(prompt.split()),
            tokens_out=len(text.split()),
            refused=refused,
            refusal_reason="scripted refusal" if refused else None,
        )
