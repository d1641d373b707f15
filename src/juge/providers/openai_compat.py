"""OpenAI-compatible chat completions (OpenAI, Azure OpenAI, vLLM, Ollama, llama.cpp server, TGI).

Point `base_url` at the server (default: ``OPENAI_BASE_URL``, else OpenAI's); the key is read
from the environment variable named by `api_key_env` (default OPENAI_API_KEY). There are no
retries here: the engine retries with backoff and records every attempt.

Requests go straight to ``POST {base_url}/chat/completions`` over one HTTP client (aiohttp, or pyreqwest with
the option ``http = "pyreqwest"`` or ``JUGE_HTTP=pyreqwest``: see `juge.providers.transport`) with keep-alive
connections and no pool limit (the engine bounds concurrency). The `openai` SDK is
not used on this path: over httpx its per-call cost was 1.6-6 ms of CPU on this project's
benchmark machine at 256 concurrent calls (httpcore's pool scans every connection on every
request), about ten times the whole engine; see bench/throughput.py. Pass an
``httpx.AsyncClient`` as `http_client` to send through it instead (custom transports, tests).

`timeout` (seconds) bounds each request; by default there is none here, so the engine's
per-call ``[engine] timeout`` is the one that applies. `max_response_bytes` bounds the answer's body
(default :data:`~juge.providers.base.MAX_RESPONSE_BYTES`): a longer one is refused as it is read, so a
server that sends gigabytes costs no more memory than the bound. An answer with a key twice, several
choices or an absurd token count is refused too (a clear, non-retryable error). The environment's proxy (HTTPS_PROXY,
HTTP_PROXY, ALL_PROXY, NO_PROXY) is used, except for a server on this machine (loopback).

`logprobs = true` (off by default: not every OpenAI-compatible server takes the parameter) asks, for a
constrained judge only (the answer is the verdict alone), for the first token's ``top_logprobs``; the
probabilities of the tokens that are exactly an allowed answer, normalised over the allowed answers, are stored
as the call's ``distribution`` (what ``--rule guarantee`` and ``--cascade`` read as the judge's confidence). An
answer whose first token is none of them records no distribution. Batch mode records none.
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from juge.fastjson import dump_bytes
from juge.providers.base import (
    MAX_RESPONSE_BYTES,
    DuplicateKeyError,
    Provider,
    ProviderClosed,
    ProviderError,
    Request,
    Response,
    body_too_large,
    checked_max_response_bytes,
    error_message,
    error_text,
    json_with_unique_keys,
    retry_after_seconds,
)
from juge.providers.transport import env_proxy as _env_proxy
from juge.providers.transport import http_client_name, make_transport
from juge.providers.transport import is_loopback as _is_loopback

if TYPE_CHECKING:
    import httpx  # only for a caller's own client: importing it costs every run ~40 ms of start-up

    from juge.providers.openai_batches import OpenAIBatches

OPENAI_BASE_URL = "https://api.openai.com/v1"


class OpenAICompatProvider(Provider):
    name = "openai"

    def __init__(
        self,
        *,
        base_url: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        api_key: str | None = None,
        timeout: float | None = None,
        http_client: httpx.AsyncClient | None = None,
        max_response_bytes: int = MAX_RESPONSE_BYTES,
        http: str | None = None,
        logprobs: bool = False,
    ):
        # OPENAI_BASE_URL counts as a base_url given: its server (a local one above all) needs no key.
        base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get(api_key_env) or ("not-needed" if base_url else None)
        if key is None:
            raise ProviderError(
                f"no API key: set {api_key_env} (or give --base-url / OPENAI_BASE_URL for a local server, which needs none)"
            )
        # The endpoint is part of the provider's identity: it goes into the cache key and the call log.
        self.name = f"openai@{base_url}" if base_url else "openai"
        if not isinstance(logprobs, bool):
            raise ProviderError(f"option logprobs must be true or false, got {logprobs!r}")
        self.logprobs = logprobs  # an option: in the cache identity, so answers with and without one stay apart
        root = (base_url or OPENAI_BASE_URL).rstrip("/")
        headers = {"authorization": f"Bearer {key}"}
        for env, header in (("OPENAI_ORG_ID", "openai-organization"), ("OPENAI_PROJECT_ID", "openai-project")):
            if os.environ.get(env):
                headers[header] = os.environ[env]
        self._connect(
            root,
            root + "/chat/completions",
            headers,
            timeout=timeout,
            http_client=http_client,
            max_response_bytes=max_response_bytes,
            http=http,
        )

    def _connect(
        self,
        root: str,
        url: str,
        headers: Mapping[str, str],
        *,
        timeout: float | None,
        http_client: httpx.AsyncClient | None,
        max_response_bytes: int,
        http: str | None = None,
    ) -> None:
        """Where calls go (`url`; `root` for the batch API) and the headers that authorise them; no connection
        is opened here."""
        self.root = root
        self.url = url
        self.headers = {**headers, "content-type": "application/json", "accept": "application/json"}
        self.timeout = timeout
        self.max_response_bytes = checked_max_response_bytes(max_response_bytes)
        self.http_client = http_client
        self.proxy = _env_proxy(self.url)  # read once: aiohttp's trust_env reads it in a thread per request
        # The HTTP client (aiohttp unless `http` or JUGE_HTTP says pyreqwest); nothing is connected here.
        self.transport = make_transport(
            http_client_name(http),
            timeout=timeout,
            max_response_bytes=self.max_response_bytes,
            proxy=self.proxy,
            owner=self.name,
        )

    def url_for(self, request: Request) -> str:
        """Where `request` is sent (one URL here; Azure puts the deployment in the path)."""
        return self.url

    logprobs = False  # a subclass (azure) that does not take the option

    async def complete(self, request: Request) -> Response:
        scored = self.logprobs and bool(request.allowed)
        extra = {"logprobs": True, "top_logprobs": TOP_LOGPROBS} if scored else {}
        body = dump_bytes({**_payload(request), **extra})
        status, headers, raw = await self._post(body, self.url_for(request))
        if status >= 400:
            message = error_message(raw)
            hint = (
                _field_hint(message, body, schema_only=status == 500)
                if 400 <= status <= 500 and status != 429
                else None
            )
            raise ProviderError(
                f"HTTP {status}: {message}" + (f" ({hint})" if hint else ""),
                # the same request would be refused again, however often it is sent
                retryable=hint is None and (status == 429 or status >= 500),
                status=status,
                retry_after=retry_after_seconds(headers),
            )
        try:
            completion = json_with_unique_keys(raw)
        except DuplicateKeyError as exc:  # which of the two values counts is up to the reader: neither does
            raise _malformed(str(exc)) from None
        except ValueError as exc:  # a 200 whose body is cut or garbled: worth another try
            raise ProviderError(f"the server's answer was not valid JSON: {exc}", retryable=True) from exc
        if isinstance(completion, dict) and "choices" not in completion and completion.get("error"):
            # Some servers and proxies report an overload or an upstream failure in a 200.
            raise ProviderError(f"HTTP {status} with an error: {error_text(completion['error'])}", retryable=True)
        response = _response(completion, request.model)
        if scored:
            response.distribution = allowed_distribution(completion, request.allowed or ())
        return response

    async def _post(self, body: bytes, url: str) -> tuple[int, Mapping[str, str], bytes]:
        """(status, headers, body) of one POST; a failed connection or a cut body is a retryable ProviderError."""
        if self.http_client is not None:
            return await self._post_httpx(body, url)
        return await self.transport.post(url, body, self.headers)

    async def _post_httpx(self, body: bytes, url: str) -> tuple[int, Mapping[str, str], bytes]:
        import httpx  # the caller passed a client: it is loaded already

        assert self.http_client is not None
        if self.http_client.is_closed:
            raise ProviderClosed(f"{self.name}: the HTTP client was closed; no call was made")
        cap = self.max_response_bytes
        try:
            async with self.http_client.stream(
                "POST", url, content=body, headers=self.headers, timeout=self.timeout
            ) as reply:
                read = bytearray()
                async for chunk in reply.aiter_bytes():  # decoded: a gzip bomb is bounded too
                    read += chunk
                    if len(read) > cap:
                        raise body_too_large(cap)
                return reply.status_code, reply.headers, bytes(read)
        except httpx.TimeoutException as exc:
            raise ProviderError(f"timeout: {exc}", retryable=True) from exc
        except httpx.ConnectError as exc:  # no connection made: refused, no such host
            raise ProviderError(f"connection failed: {exc}", retryable=True, unreachable=True) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"connection failed: {exc}", retryable=True) from exc

    def batches(self) -> OpenAIBatches:
        """This endpoint's Batch API (``[engine] mode = "batch"``), with the provider's key and headers."""
        from juge.providers.openai_batches import OpenAIBatches

        return OpenAIBatches(
            self.root,
            self.headers,
            trust_env=not _is_loopback(urlsplit(self.root).hostname or ""),
            payload=_payload,
            response=_response,
        )

    @property
    def closed(self) -> bool:
        """No HTTP connections are open (none made yet, or closed by `aclose`)."""
        return self.transport.closed and (self.http_client is None or self.http_client.is_closed)

    async def aclose(self) -> None:
        """Close the HTTP connections; call it before the event loop that used them ends."""
        await self.transport.aclose()
        if self.http_client is not None:
            await self.http_client.aclose()


def _payload(request: Request) -> dict[str, Any]:
    params: dict[str, Any] = {
        "model": request.model,
        "messages": list(request.messages),
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
    }
    if request.json_schema is not None:
        params["response_format"] = {
            "type": "json_schema",
            "json_schema": {"name": "verdict", "schema": request.json_schema, "strict": True},
        }
    return params


def _response(completion: Any, requested_model: str) -> Response:
    """The Response in a chat completion body; a body of another shape is a non-retryable ProviderError
    (a healthy server gives the same shape again; nothing of it is cached, so a later run asks again)."""
    if not isinstance(completion, dict):
        raise _malformed(f"the body is {_kind(completion)}, not an object")
    choices = completion.get("choices")
    if not isinstance(choices, list):
        raise _malformed(f"'choices' is {_kind(choices)}, not a list")
    model = completion.get("model") or requested_model
    if not choices:
        raise ProviderError(f"the server returned no choices (model {model})")
    if len(choices) > 1:  # juge asks for one (no `n`): which one is the verdict would be a guess
        raise _malformed(f"{len(choices)} choices where one was asked for")
    choice = choices[0]
    if not isinstance(choice, dict):
        raise _malformed(f"'choices[0]' is {_kind(choice)}, not an object")
    message = choice.get("message") or {}
    if not isinstance(message, dict):
        raise _malformed(f"'choices[0].message' is {_kind(message)}, not an object")
    usage = completion.get("usage") or {}
    if not isinstance(usage, dict):
        raise _malformed(f"'usage' is {_kind(usage)}, not an object")
    finish = choice.get("finish_reason")
    text, refused_part = _content_text(message.get("content"))
    refusal = message.get("refusal") or refused_part
    try:
        return Response(
            text=text,
            model=model,
            tokens_in=usage.get("prompt_tokens"),
            tokens_out=usage.get("completion_tokens"),
            refused=bool(refusal) or finish == "content_filter",
            refusal_reason=refusal or ("content filter" if finish == "content_filter" else None),
            raw=completion,
            truncated=finish == "length",
        )
    except TypeError as exc:  # a field of the wrong type (a model that is a number, a token count in a string)
        raise _malformed(str(exc)) from None


TOP_LOGPROBS = 20  # the most OpenAI's API gives


def allowed_distribution(completion: Mapping[str, Any], allowed: tuple[str, ...]) -> dict[str, float] | None:
    """The distribution over ``allowed`` read from the answer's first non-blank token's ``top_logprobs``: each
    allowed answer's probability (the tokens that are exactly it, blanks stripped, summed; 0 when not among the
    top tokens), normalised over the allowed answers. None when the server sent no log-probabilities or the first
    token is none of the allowed answers; a block of the wrong shape is a non-retryable error."""
    block = completion["choices"][0].get("logprobs")
    if block is None:
        return None
    content = block.get("content") if isinstance(block, dict) else None
    if content is None and isinstance(block, dict):  # OpenAI's shape for a refusal: its tokens are under "refusal"
        return None
    if not isinstance(content, list):
        raise _malformed(f"'choices[0].logprobs.content' is {_kind(content)}, not a list")
    entries = [_token_entry(t) for t in content]
    first = next((i for i, (token, _) in enumerate(entries) if token.strip()), None)
    if first is None:
        return None
    chosen = entries[first][0].strip()
    if chosen not in allowed:
        return None  # the answer starts with something else: it says nothing about the allowed answers
    if "".join(token for token, _ in entries).strip() != chosen:
        return None  # the first token is not the whole answer: "1" of a "10" whose digits are tokens of their own
    tops = content[first].get("top_logprobs")
    if not isinstance(tops, list):
        raise _malformed(f"'top_logprobs' of the first token is {_kind(tops)}, not a list")
    hits = [(token.strip(), logprob) for token, logprob in map(_token_entry, tops) if token.strip() in allowed]
    if chosen not in {token for token, _ in hits}:  # a server that lists the chosen token but not among its top
        hits.append((chosen, entries[first][1]))
    # Shifted by the largest log-probability: exp(-800) is 0.0, and a sum of zeros cannot be normalised.
    top = max(logprob for _, logprob in hits)
    mass = dict.fromkeys(allowed, 0.0)
    for token, logprob in hits:
        mass[token] += math.exp(logprob - top)
    total = sum(mass.values())
    return {a: m / total for a, m in mass.items()}


def _token_entry(entry: Any) -> tuple[str, float]:
    """(token, log-probability) of one logprobs entry, checked: a string and a finite number <= 0."""
    token = entry.get("token") if isinstance(entry, dict) else None
    logprob = entry.get("logprob") if isinstance(entry, dict) else None
    if not isinstance(token, str) or isinstance(logprob, bool) or not isinstance(logprob, (int, float)):
        raise _malformed(f"a logprobs entry is {_kind(entry)}, not a token and its log-probability")
    if not math.isfinite(logprob) or logprob > 1e-9:
        raise _malformed(f"logprob {logprob!r} of token {token!r} is not a finite number <= 0")
    return token, float(logprob)


def _content_text(content: Any) -> tuple[str, str | None]:
    """(text, refusal) of a message's content: a string, or a list of parts whose "text" parts are
    joined and whose "refusal" parts are the refusal (other kinds, an image, carry no verdict)."""
    if content is None or isinstance(content, str):
        return content or "", None
    if not isinstance(content, list):
        raise _malformed(f"the message content is {_kind(content)}, not text or a list of parts")
    found: dict[str, list[str]] = {"text": [], "refusal": []}
    for i, part in enumerate(content):
        if not isinstance(part, dict):
            raise _malformed(f"content part {i} is {_kind(part)}, not an object")
        kind = part.get("type", "text")
        if kind in found:
            value = part.get(kind)
            if not isinstance(value, str):
                raise _malformed(f"content part {i}'s {kind} is {_kind(value)}, not a string")
            found[kind].append(value)
    return "".join(found["text"]), "".join(found["refusal"]) or None


def _malformed(detail: str) -> ProviderError:
    return ProviderError(f"the server's answer is not a chat completion: {detail}", retryable=False)


def _kind(value: Any) -> str:
    """`value`'s JSON type and its start, for an error message: "str 'PASS'"."""
    return f"{type(value).__name__} {value!r:.60}"


# A request field a server may refuse, and the judge option that sets it.
_FIELD_OPTIONS = {
    "response_format": "set structured = false in the judge file (the server does not take a JSON schema)",
    "json_schema": "set structured = false in the judge file (the server does not take a JSON schema)",
    "max_tokens": "change max_tokens in the judge file",
    "temperature": "change temperature in the judge file",
    "model": "change model in the judge file",
}


def _field_hint(message: str, body: bytes, *, schema_only: bool = False) -> str | None:
    """What to change when a refusal names a field this request sent: a 4xx, or a 500 naming the
    JSON schema (a server that does not know it may fail with 500; "model" in a 500 is an overload)."""
    sent = body.decode("utf-8", "replace")
    for name, option in _FIELD_OPTIONS.items():
        if schema_only and name not in ("response_format", "json_schema"):
            continue
        if re.search(rf"(?<![A-Za-z_]){name}(?![A-Za-z_])", message) and f'"{name}"' in sent:
            return f"the server refused the request field '{name}': {option}"
    return None
