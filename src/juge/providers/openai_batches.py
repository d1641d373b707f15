"""OpenAI's Batch API for the OpenAI-compatible provider: upload a JSONL of chat completion requests
(``POST /files``, purpose ``batch``), create a batch on it (``POST /batches``), poll it
(``GET /batches/{id}``) and download its output and error files (``GET /files/{id}/content``).

Few calls are made, so they go through httpx (multipart uploads, streaming downloads); the endpoint,
key and headers are the provider's own. Azure OpenAI's batch API is the same one under ``/openai`` with an
``api-version`` query on every call and ``/chat/completions`` as the requests' URL (`query`, `endpoint`).
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from typing import Any

import httpx

from juge.providers.base import (
    DuplicateKeyError,
    ProviderError,
    Request,
    Response,
    json_with_unique_keys,
    retry_after_seconds,
)
from juge.providers.batch_api import BatchStatus

ENDED = ("completed", "failed", "expired", "cancelled")


class OpenAIBatches:
    """The Batch API of one OpenAI-compatible endpoint (`root` ends in ``/v1``)."""

    max_requests = 50_000
    max_bytes = 190_000_000  # OpenAI takes files up to 200 MB

    def __init__(
        self,
        root: str,
        headers: Mapping[str, str],
        *,
        trust_env: bool,
        payload: Any,
        response: Any,
        query: Mapping[str, str] | None = None,
        endpoint: str = "/v1/chat/completions",
    ):
        self.root = root
        self.query = dict(query or {})
        self.endpoint = endpoint
        self.headers = {k: v for k, v in headers.items() if k != "content-type"}
        self.trust_env = trust_env
        self._client: httpx.AsyncClient | None = (
            None  # made at the first call: asking whether batches exist opens nothing
        )
        self._payload, self._response = payload, response

    def _line(self, key: str, request: Request) -> bytes:
        line = {"custom_id": key, "method": "POST", "url": self.endpoint, "body": self._payload(request)}
        return json.dumps(line, ensure_ascii=False).encode() + b"\n"

    def line_size(self, key: str, request: Request) -> int:
        return len(self._line(key, request))

    async def _call(self, method: str, path: str, **kwargs: Any) -> httpx.Response:
        try:
            if self._client is None:
                self._client = httpx.AsyncClient(trust_env=self.trust_env, timeout=httpx.Timeout(300.0, connect=30.0))
            reply = await self._client.request(
                method, self.root + path, headers=self.headers, params=self.query or None, **kwargs
            )
        except httpx.TimeoutException as exc:
            raise ProviderError(f"batch API {method} {path}: timeout: {exc}", retryable=True) from exc
        except httpx.TransportError as exc:
            raise ProviderError(f"batch API {method} {path}: connection failed: {exc}", retryable=True) from exc
        if reply.status_code >= 400:
            raise ProviderError(
                f"batch API {method} {path}: HTTP {reply.status_code}: {_message(reply)}",
                retryable=reply.status_code == 429 or reply.status_code >= 500,
                status=reply.status_code,
                retry_after=retry_after_seconds(reply.headers),
            )
        return reply

    async def submit(self, requests: Sequence[tuple[str, Request]]) -> str:
        data = b"".join(self._line(key, request) for key, request in requests)
        upload = await self._call(
            "POST", "/files", data={"purpose": "batch"}, files={"file": ("juge-batch.jsonl", data, "application/jsonl")}
        )
        file_id = _field(upload, "id")
        batch = await self._call(
            "POST",
            "/batches",
            json={"input_file_id": file_id, "endpoint": self.endpoint, "completion_window": "24h"},
        )
        return str(_field(batch, "id"))

    async def status(self, batch_id: str) -> BatchStatus:
        reply = await self._call("GET", f"/batches/{batch_id}")
        body = reply.json()
        state = str(body.get("status"))
        counts = body.get("request_counts") or {}
        return BatchStatus(
            id=batch_id,
            state=state,
            ended=state in ENDED,
            counts={k: int(v) for k, v in counts.items() if isinstance(v, int)},
            detail={
                k: body.get(k) for k in ("output_file_id", "error_file_id", "errors", "expires_at", "completed_at")
            },
        )

    async def results(self, status: BatchStatus, models: Mapping[str, str]) -> dict[str, Response | ProviderError]:
        out: dict[str, Response | ProviderError] = {}
        for which in ("output_file_id", "error_file_id"):
            file_id = status.detail.get(which)
            if not file_id:
                continue
            reply = await self._call("GET", f"/files/{file_id}/content")
            for line in reply.text.splitlines():
                if not line.strip():
                    continue
                try:
                    key, answer = self._answer(json_with_unique_keys(line), models)
                except DuplicateKeyError as exc:  # that request's answer is refused, as an online one is
                    key = str(json.loads(line).get("custom_id"))
                    answer = ProviderError(f"the server's answer is not a chat completion: {exc}")
                out[key] = answer
        return out

    def _answer(self, line: dict[str, Any], models: Mapping[str, str]) -> tuple[str, Response | ProviderError]:
        """One line of an output or error file: (custom id, the Response or the request's error)."""
        key = str(line.get("custom_id"))
        response = line.get("response") or {}
        error = line.get("error")
        code = response.get("status_code")
        if error is None and code == 200:
            try:
                return key, self._response(response.get("body"), models.get(key, ""))
            except ProviderError as exc:
                return key, exc
        if error is None:
            error = (response.get("body") or {}).get("error") or {"message": f"HTTP {code}"}
        if isinstance(error, dict):
            text = ": ".join(str(error[k]) for k in ("code", "message") if error.get(k))
        else:
            text = str(error)
        return key, ProviderError(f"batch request failed: {text or 'no reason given'}", status=code)

    async def aclose(self) -> None:
        if self._client is not None:
            await self._client.aclose()


def _field(reply: httpx.Response, name: str) -> Any:
    try:
        return reply.json()[name]
    except (ValueError, KeyError, TypeError):
        raise ProviderError(f"batch API: the answer has no {name!r}: {reply.text[:200]}") from None


def _message(reply: httpx.Response) -> str:
    try:
        error = reply.json()["error"]
        return str(error.get("message", error) if isinstance(error, dict) else error)[:500]
    except (ValueError, KeyError, TypeError):
        return reply.text[:300] or "(empty body)"
