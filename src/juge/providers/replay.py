"""Serve recorded judge answers from a JSONL file, without calling any model.

Each line is one recorded call, keyed by (item_id, judge, template, order, repeat).
Both layouts are read: the shared MT-Bench sample's (`prompt` is the template id,
`letter`/`outcome`/`text`/`model`) and juge's own export (`template`, `order`, ...).
A request with no recording is an error, never a made-up answer.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from juge.data.readers import iter_rows
from juge.errors import input_error
from juge.providers.base import Provider, ProviderError, Request, Response

Key = tuple[str, str, str, str, int]


def _key(item_id: Any, judge: Any, template: Any, order: Any, repeat: Any) -> Key:
    return (str(item_id), str(judge), str(template), str(order or ""), int(repeat or 0))


class ReplayProvider(Provider):
    name = "replay"
    cacheable = False  # the recording is the cache; a request it lacks must stay an error

    def __init__(self, *, path: str | Path):
        self.path = Path(path)
        self.records: dict[Key, dict[str, Any]] = {}
        if not self.path.is_file():
            raise input_error(
                self.path,
                "recorded judgments file not found"
                if not self.path.exists()
                else "is not a file; give the recorded judgments file (JSONL)",
            )
        for lineno, rec in iter_rows(self.path):
            for field in ("item_id", "judge"):
                if field not in rec:
                    raise input_error(self.path, "required field is missing", line=lineno, field=field)
            template = rec.get("template", rec.get("prompt"))
            if template is None:
                raise input_error(self.path, "required field is missing", line=lineno, field="template")
            key = _key(rec["item_id"], rec["judge"], template, rec.get("order"), rec.get("repeat"))
            self.records[key] = rec

    async def complete(self, request: Request) -> Response:
        m = request.meta
        key = _key(m.get("item_id"), m.get("judge"), m.get("template"), m.get("order"), m.get("repeat"))
        rec = self.records.get(key)
        if rec is None:
            raise ProviderError(
                f"no recorded answer in {self.path} for item={key[0]} judge={key[1]} template={key[2]}"
                f" order={key[3] or '-'} repeat={key[4]}"
            )
        outcome = rec.get("outcome", "ok")
        if outcome == "error":
            raise ProviderError(f"recorded call failed: {rec.get('text') or rec.get('reason') or 'error'}")
        return Response(
            text=rec.get("text") or "",
            model=rec.get("model", "unknown"),
            tokens_in=rec.get("tokens_in"),
            tokens_out=rec.get("tokens_out"),
            refused=outcome == "refused",
            refusal_reason="recorded refusal" if outcome == "refused" else None,
            distribution=rec.get("distribution"),
        )
