"""The mock server's batch APIs: OpenAI Files + Batches and Anthropic Message Batches.

A batch is answered ``batch_delay`` seconds (wall clock) after it was created, with the same
deterministic answers as the chat completions route. Each request's fate is drawn from its custom
id (`batch_outcome`): ``batch_errors`` of them fail with an error line, and when ``batch_expire``
is set that share is left unanswered and the batch ends expired (OpenAI: status ``expired`` and
``batch_expired`` error lines; Anthropic: ``expired`` results).
"""

from __future__ import annotations

import json
import time
import uuid
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

from juge.testing.mockmodel import MockConfig, _completion, _unit, expected_answer, request_digest

OPENAI_PATHS = (b"/v1/files", b"/files", b"/v1/batches", b"/batches", b"/openai/files", b"/openai/batches")
ANTHROPIC_PATH = b"/v1/messages/batches"


def batch_outcome(config: MockConfig, custom_id: str) -> str:
    """What a batch does with the request named `custom_id`: "ok", "error" or "expired"."""
    if _unit(config.seed, "batch-error", custom_id) < config.batch_errors:
        return "error"
    if _unit(config.seed, "batch-expire", custom_id) < config.batch_expire:
        return "expired"
    return "ok"


class MockBatches:
    """The files and batches one mock server holds, in memory."""

    def __init__(self, config: MockConfig):
        self.config = config
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0
        self.requests = 0

    def handles(self, path: bytes) -> bool:
        return path.startswith(OPENAI_PATHS) or path.startswith(ANTHROPIC_PATH)

    def stats(self) -> dict[str, int]:
        return {"batches_created": self.created, "batch_requests": self.requests}

    def respond(self, method: bytes, path: bytes, body: bytes, base: str) -> tuple[int, Any]:
        """(status, a JSON-able body or raw bytes) for a batch route."""
        parts = path.decode(errors="replace").strip("/").split("/")
        if parts and parts[0] in ("v1", "openai"):  # openai: Azure's batch API, the same under /openai
            parts = parts[1:]
        try:
            if parts[:2] == ["messages", "batches"]:
                return self._anthropic(method, parts[2:], body, base)
            if parts[0] == "files":
                return self._files(method, parts[1:], body)
            return self._openai_batches(method, parts[1:], body)
        except (ValueError, KeyError, TypeError) as exc:
            return 400, _error(f"bad request: {exc}")

    # ---- OpenAI -------------------------------------------------------------------------
    def _files(self, method: bytes, rest: list[str], body: bytes) -> tuple[int, Any]:
        if method == b"POST" and not rest:
            data = _multipart_file(body)
            file_id = "file-" + uuid.uuid4().hex[:24]
            self.files[file_id] = data
            return 200, {"id": file_id, "object": "file", "bytes": len(data), "purpose": "batch"}
        if method == b"GET" and len(rest) == 2 and rest[1] == "content":
            if rest[0] not in self.files:
                return 404, _error(f"no file {rest[0]}")
            return 200, self.files[rest[0]]
        return 404, _error("no such files route")

    def _openai_batches(self, method: bytes, rest: list[str], body: bytes) -> tuple[int, Any]:
        if method == b"POST" and not rest:
            payload = json.loads(body)
            lines = [json.loads(x) for x in self.files[payload["input_file_id"]].splitlines() if x.strip()]
            batch = self._new("batch_", [(x["custom_id"], x["body"]) for x in lines])
            batch["input_file_id"] = payload["input_file_id"]
            return 200, self._openai_view(batch)
        if method == b"GET" and len(rest) == 1 and rest[0] in self.batches:
            return 200, self._openai_view(self.batches[rest[0]])
        return 404, _error("no such batch")

    def _openai_view(self, batch: dict[str, Any]) -> dict[str, Any]:
        ended = self._ended(batch)
        view: dict[str, Any] = {
            "id": batch["id"],
            "object": "batch",
            "endpoint": "/v1/chat/completions",
            "input_file_id": batch.get("input_file_id"),
            "completion_window": "24h",
            "created_at": int(batch["created"]),
            "status": "in_progress",
            "output_file_id": None,
            "error_file_id": None,
            "request_counts": {"total": len(batch["requests"]), "completed": 0, "failed": 0},
        }
        if not ended:
            return view
        if "output_file_id" not in batch:
            out, err = [], []
            for custom_id, fate, request in batch["answers"]:
                line: dict[str, Any] = {"id": "batch_req_" + uuid.uuid4().hex[:16], "custom_id": custom_id}
                if fate == "ok":
                    out.append(
                        line | {"response": {"status_code": 200, "body": self._completion(request)}, "error": None}
                    )
                elif fate == "error":
                    body = _error("the request was invalid for this model (mock)")
                    err.append(line | {"response": {"status_code": 400, "body": body}, "error": None})
                else:
                    expired = {
                        "code": "batch_expired",
                        "message": "This request could not be executed before the completion window expired.",
                    }
                    err.append(line | {"response": None, "error": expired})
            batch["output_file_id"] = self._file(out)
            batch["error_file_id"] = self._file(err)
            batch["counts"] = {"total": len(batch["requests"]), "completed": len(out), "failed": len(err)}
        view.update(
            status="expired" if batch["expired"] else "completed",
            output_file_id=batch["output_file_id"],
            error_file_id=batch["error_file_id"],
            request_counts=batch["counts"],
        )
        return view

    def _file(self, lines: list[dict[str, Any]]) -> str | None:
        if not lines:
            return None
        file_id = "file-" + uuid.uuid4().hex[:24]
        self.files[file_id] = "".join(json.dumps(x) + "\n" for x in lines).encode()
        return file_id

    def _completion(self, request: dict[str, Any]) -> dict[str, Any]:
        model, messages = request["model"], request["messages"]
        text = expected_answer(self.config, model, messages)
        return _completion(request_digest(model, messages), model, messages, text, refused=False)

    # ---- Anthropic ----------------------------------------------------------------------
    def _anthropic(self, method: bytes, rest: list[str], body: bytes, base: str) -> tuple[int, Any]:
        if method == b"POST" and not rest:
            payload = json.loads(body)
            batch = self._new("msgbatch_", [(r["custom_id"], r["params"]) for r in payload["requests"]])
            return 200, self._anthropic_view(batch, base)
        if method == b"GET" and rest and rest[0] in self.batches:
            batch = self.batches[rest[0]]
            if len(rest) == 1:
                return 200, self._anthropic_view(batch, base)
            if rest[1:] == ["results"] and self._ended(batch):
                return 200, "".join(json.dumps(x) + "\n" for x in self._anthropic_results(batch)).encode()
        return 404, _error("no such message batch")

    def _anthropic_view(self, batch: dict[str, Any], base: str) -> dict[str, Any]:
        ended = self._ended(batch)
        fates = [fate for _, fate, _ in batch["answers"]]
        n = len(fates)
        counts = {"processing": n, "succeeded": 0, "errored": 0, "canceled": 0, "expired": 0}
        if ended:
            counts = {
                "processing": 0,
                "succeeded": fates.count("ok"),
                "errored": fates.count("error"),
                "canceled": 0,
                "expired": fates.count("expired"),
            }
        created = _iso(batch["created"])
        return {
            "id": batch["id"],
            "type": "message_batch",
            "processing_status": "ended" if ended else "in_progress",
            "request_counts": counts,
            "created_at": created,
            "expires_at": _iso(batch["created"] + 86400),
            "ended_at": _iso(batch["created"] + self.config.batch_delay) if ended else None,
            "archived_at": None,
            "cancel_initiated_at": None,
            "results_url": f"{base}/v1/messages/batches/{batch['id']}/results" if ended else None,
        }

    def _anthropic_results(self, batch: dict[str, Any]) -> list[dict[str, Any]]:
        out = []
        for custom_id, fate, params in batch["answers"]:
            if fate == "ok":
                text = expected_answer(self.config, params["model"], params["messages"])
                tokens_in = sum(len(str(m.get("content", "")).split()) for m in params["messages"])
                message = {
                    "id": "msg_" + uuid.uuid4().hex[:20],
                    "type": "message",
                    "role": "assistant",
                    "model": params["model"],
                    "content": [{"type": "text", "text": text}],
                    "stop_reason": "end_turn",
                    "stop_sequence": None,
                    "usage": {"input_tokens": tokens_in, "output_tokens": len(text.split())},
                }
                result: dict[str, Any] = {"type": "succeeded", "message": message}
            elif fate == "error":
                result = {
                    "type": "errored",
                    "error": {"type": "error", "error": {"type": "invalid_request_error", "message": "invalid (mock)"}},
                }
            else:
                result = {"type": "expired"}
            out.append({"custom_id": custom_id, "result": result})
        return out

    # ---- both ---------------------------------------------------------------------------
    def _new(self, prefix: str, requests: list[tuple[str, dict[str, Any]]]) -> dict[str, Any]:
        ids = [custom_id for custom_id, _ in requests]
        if len(set(ids)) != len(ids):
            raise ValueError("custom ids must be unique within a batch")
        batch_id = prefix + uuid.uuid4().hex[:20]
        answers = [(custom_id, batch_outcome(self.config, custom_id), request) for custom_id, request in requests]
        batch = {
            "id": batch_id,
            "created": time.time(),
            "requests": ids,
            "answers": answers,
            "expired": any(fate == "expired" for _, fate, _ in answers),
        }
        self.batches[batch_id] = batch
        self.created += 1
        self.requests += len(requests)
        return batch

    def _ended(self, batch: dict[str, Any]) -> bool:
        return time.time() - batch["created"] >= self.config.batch_delay


def _multipart_file(body: bytes) -> bytes:
    """The `file` field of a multipart/form-data body (its boundary is its first line)."""
    boundary = body.split(b"\r\n", 1)[0][2:]
    head = b"Content-Type: multipart/form-data; boundary=" + boundary + b"\r\n\r\n"
    message = BytesParser(policy=HTTP).parsebytes(head + body)
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)  # bytes for a non-multipart part
            if isinstance(payload, bytes):
                return payload
    raise ValueError("no file field in the upload")


def _error(message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "invalid_request_error"}}


def _iso(seconds: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(seconds))
