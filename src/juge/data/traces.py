"""`juge import traces`: production traces exported from a trace store, as cases that `juge run` judges.

One case per trace: the user's question, the answer the application gave, the documents its retrieval
steps returned as context, the model of its last LLM call, its start and end, and the trace id as the
case's id and group (so a split keeps a trace on one side). Three export formats are read:

- ``otel``: OpenTelemetry spans as OTLP JSON (what the OTLP/HTTP exporter posts and the collector's file
  exporter writes: ``{"resourceSpans": [...]}``, one object or one per line), with the GenAI semantic
  conventions: ``gen_ai.input.messages`` / ``gen_ai.output.messages`` (attributes, or the
  ``gen_ai.client.inference.operation.details`` event), the older ``gen_ai.prompt`` / ``gen_ai.completion``
  and ``gen_ai.user.message`` / ``gen_ai.choice`` events, ``gen_ai.request.model`` /
  ``gen_ai.response.model``, and retrieval spans (``gen_ai.operation.name = "retrieval"``) with
  ``gen_ai.retrieval.documents``.
- ``langfuse``: Langfuse traces as its API and export give them (a JSON list, ``{"data": [...]}`` or JSONL),
  each with ``input``, ``output``, ``timestamp``, ``sessionId`` and optionally its ``observations``; or the
  observations themselves (``traceId``, ``type`` GENERATION / RETRIEVER / SPAN ..., ``model``).
- ``phoenix``: Arize Phoenix spans (JSONL or a JSON list as its REST API gives them, or the Parquet of
  ``get_spans_dataframe()``) with OpenInference attributes: ``openinference.span.kind``, ``input.value``,
  ``output.value``, ``llm.input_messages`` / ``llm.output_messages``, ``llm.model_name``,
  ``retrieval.documents``; nested, dotted (``attributes.llm.model_name``) or indexed
  (``llm.input_messages.0.message.content``).

The question is the root span's input (else the first LLM call's last user message); the answer the root
span's output (else the last LLM call's). A trace with neither is skipped and counted. The texts are case
text like any other: untrusted, delimited where they enter a prompt.
"""

from __future__ import annotations

import json
import random
import re
from collections import Counter, defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from juge.data.records import Case
from juge.data.results import TracesImport
from juge.errors import InputError, input_error

TraceFormat = Literal["otel", "langfuse", "phoenix"]
FORMATS: tuple[TraceFormat, ...] = ("otel", "langfuse", "phoenix")


@dataclass
class Span:
    """One span (or Langfuse trace or observation), reduced to what a case needs."""

    trace_id: str
    span_id: str
    parent_id: str | None = None
    kind: Literal["llm", "retrieval", "other"] = "other"
    question: str | None = None
    output: str | None = None
    model: str | None = None
    documents: list[str] = field(default_factory=list)
    start: datetime | None = None
    end: datetime | None = None
    session: str | None = None


def import_traces(
    path: str | Path,
    output: str | Path,
    *,
    format: TraceFormat,
    sample: int | None = None,
    per_day: int | None = None,
    seed: int = 0,
) -> TracesImport:
    """Read a trace export (``format``: otel, langfuse or phoenix) and write one case per trace to
    ``output`` (JSONL), which ``juge run --cases`` reads (``juge import traces``).

    ``per_day`` keeps at most that many traces of each UTC day (the day the trace started), ``sample`` at
    most that many in all (after ``per_day``); both draw with ``seed``, each day with its own draw, so a
    new day in the export does not change the traces kept on the others. The file is written whole or not
    at all. Returns the counts read, skipped (by reason) and written, and the cases written per day.

    >>> import juge
    >>> juge.import_traces("spans.json", "cases.jsonl", format="otel", per_day=50).cases  # doctest: +SKIP
    350
    """
    from juge.files import staged

    path, output = Path(path), Path(output)
    if format not in FORMATS:
        raise InputError(f"--format {format!r}: use one of {', '.join(FORMATS)}")
    for name, value in (("--sample", sample), ("--per-day", per_day)):
        if value is not None and value < 1:
            raise InputError(f"{name} {value}: give a positive number of traces")
    if not path.exists():
        raise InputError(f"{path}: file not found")
    if output.suffix.lower() != ".jsonl":
        raise InputError(f"{output}: cases are written as JSONL; give a path ending in .jsonl")
    with staged(output, "--output") as tmp:
        spans = list(_READERS[format](path))
        cases, skipped = cases_from_spans(spans, source=format)
        if not cases:
            reasons = ", ".join(f"{n} {why}" for why, n in skipped.items()) or "no spans"
            raise InputError(f"{path}: no trace could be read as a case ({reasons}); is --format {format} right?")
        kept = sample_cases(cases, sample=sample, per_day=per_day, seed=seed)
        tmp.write_text(
            "".join(json.dumps(c.model_dump(exclude_none=True), ensure_ascii=False) + "\n" for c in kept),
            encoding="utf-8",
        )
    return TracesImport(
        source=str(path),
        format=format,
        path=str(output),
        spans=len(spans),
        traces=len(cases) + sum(skipped.values()),
        skipped=dict(skipped),
        cases=len(kept),
        per_day=per_day,
        sample=sample,
        seed=seed,
        days=dict(sorted(Counter(_day(c) for c in kept).items())),
    )


# --- spans to cases ----------------------------------------------------------------------------


def cases_from_spans(spans: Iterable[Span], *, source: str) -> tuple[list[Case], Counter[str]]:
    """One case per trace (see the module's docstring), and the traces skipped by reason."""
    by_trace: dict[str, list[Span]] = defaultdict(list)
    for span in spans:
        by_trace[span.trace_id].append(span)
    cases, skipped = [], Counter[str]()
    for trace_id, members in by_trace.items():
        ids = {s.span_id for s in members}
        members.sort(key=lambda s: (s.start or _EPOCH, s.end or _EPOCH))
        roots = [s for s in members if not s.parent_id or s.parent_id not in ids]
        llm = [s for s in members if s.kind == "llm"]
        question = _first(s.question for s in [*roots, *llm])
        output = _first(s.output for s in [*roots, *reversed(llm)])
        if question is None:
            skipped["without a question"] += 1
            continue
        if output is None:
            skipped["without an output"] += 1
            continue
        documents = [d for s in members if s.kind == "retrieval" for d in s.documents]
        starts = [s.start for s in members if s.start]
        ends = [s.end for s in members if s.end]
        meta: dict[str, Any] = {"trace_id": trace_id, "source": source}
        if roots and roots[0].span_id:  # what `juge export --format otel` hangs the verdicts under
            meta["span_id"] = roots[0].span_id
        for key, value in (
            ("model", _first(s.model for s in reversed(llm)) or _first(s.model for s in members)),
            ("started", min(starts).isoformat() if starts else None),
            ("ended", max(ends).isoformat() if ends else None),
            ("session", _first(s.session for s in members)),
        ):
            if value is not None:
                meta[key] = value
        cases.append(
            Case(
                id=trace_id,
                group=trace_id,
                question=question,
                output=output,
                context="\n\n".join(documents) if documents else None,
                meta=meta,
            )
        )
    return cases, skipped


def sample_cases(cases: list[Case], *, sample: int | None, per_day: int | None, seed: int) -> list[Case]:
    """At most ``per_day`` cases of each day, then at most ``sample`` in all, drawn with ``seed``; in the
    order the traces started."""
    kept = sorted(cases, key=lambda c: c.id)
    if per_day is not None:
        days: dict[str, list[Case]] = defaultdict(list)
        for case in kept:
            days[_day(case)].append(case)
        kept = [c for day, group in days.items() for c in _draw(group, per_day, f"{seed}/{day}")]
    if sample is not None:
        kept = _draw(sorted(kept, key=lambda c: c.id), sample, str(seed))
    return sorted(kept, key=lambda c: (c.meta.get("started") or "", c.id))


def _draw(cases: list[Case], n: int, seed: str) -> list[Case]:
    return cases if len(cases) <= n else random.Random(seed).sample(cases, n)


def _day(case: Case) -> str:
    started = case.meta.get("started")
    return str(started)[:10] if started else "unknown"


_EPOCH = datetime(1970, 1, 1, tzinfo=UTC)


def _first(values: Iterable[str | None]) -> str | None:
    return next((v for v in values if v), None)


# --- text out of the many shapes a message takes -------------------------------------------------

_USER_KEYS = ("question", "query", "input", "prompt", "text", "content")
_OUTPUT_KEYS = ("answer", "output", "completion", "response", "text", "content")


def text_of(value: Any, *, role: Literal["user", "assistant"]) -> str | None:
    """The user's last message (``role="user"``) or the answer (``"assistant"``) in a value as trace
    stores record it: a string (JSON text is looked into), a list of chat messages (OpenAI's, OTel's with
    ``parts``, OpenInference's ``message.*``), a request or response object; else the value as JSON."""
    if value is None:
        return None
    if isinstance(value, str):
        stripped = value.strip()
        if stripped[:1] in ("{", "[") and stripped[-1:] in ("}", "]"):
            try:
                parsed = json.loads(stripped)
            except ValueError:
                return value or None
            return text_of(parsed, role=role) or None
        return value or None
    if isinstance(value, list):
        messages = [_message(m) for m in value]
        if messages and all(m is not None for m in messages):
            wanted = [text for r, text in messages if r == role and text]  # type: ignore[misc]
            if wanted:
                return wanted[-1] if role == "user" else wanted[0]
            return None
        return json.dumps(value, ensure_ascii=False) if value else None
    if isinstance(value, Mapping):
        for key in ("messages", "choices", "generations"):
            if isinstance(value.get(key), list):
                return text_of(value[key], role=role)
        message = _message(value)
        if message is not None:
            return message[1]
        for key in _USER_KEYS if role == "user" else _OUTPUT_KEYS:
            if isinstance(value.get(key), str | list | Mapping):
                return text_of(value[key], role=role)
        return json.dumps(value, ensure_ascii=False, default=str)
    return str(value)


def _message(value: Any) -> tuple[str, str | None] | None:
    """(role, text) of a chat message in any of the shapes above, or None for something else."""
    if not isinstance(value, Mapping):
        return None
    if isinstance(value.get("message"), Mapping):  # a choice, or OpenInference's {"message": {...}}
        inner = _message(value["message"])
        return ("assistant", inner[1]) if inner and "index" in value else inner
    role = value.get("role", value.get("message.role"))
    if not isinstance(role, str):
        return None
    content = value.get("content", value.get("message.content", value.get("parts", value.get("message.contents"))))
    return ("assistant" if role in ("assistant", "model", "ai") else role), _content(content)


def _content(content: Any) -> str | None:
    if isinstance(content, str):
        return content
    if isinstance(content, list):  # parts: {"type": "text", "content"|"text": ...}
        texts = []
        for part in content:
            if isinstance(part, str):
                texts.append(part)
            elif isinstance(part, Mapping) and part.get("type", "text") == "text":
                text = part.get("content", part.get("text", part.get("message_content.text")))
                if isinstance(text, str):
                    texts.append(text)
        return "\n".join(texts) or None
    return None


def _documents(value: Any) -> list[str]:
    """The text of each retrieved document: strings, or objects with content / page_content / text."""
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except ValueError:
            return [value] if value else []
    if isinstance(value, Mapping):
        value = value.get("documents", [value])
    out = []
    for doc in value if isinstance(value, list) else []:
        if isinstance(doc, str):
            out.append(doc)
        elif isinstance(doc, Mapping):
            flat = _flatten(doc)
            text = next(
                (
                    flat[k]
                    for k in ("content", "document.content", "page_content", "pageContent", "text")
                    if isinstance(flat.get(k), str)
                ),
                None,
            )
            if text:
                out.append(text)
    return out


# --- readers -----------------------------------------------------------------------------------


def _json_values(path: Path) -> Iterator[tuple[int, Any]]:
    """(line, value) of a JSON file (line 1) or of each line of a JSONL file."""
    text = path.read_text(encoding="utf-8-sig")
    try:
        yield 1, json.loads(text)
        return
    except ValueError:
        pass
    for number, line in enumerate(text.splitlines(), 1):
        if line.strip():
            try:
                yield number, json.loads(line)
            except ValueError as exc:
                raise input_error(path, f"not JSON (nor JSON lines): {exc}", line=number) from None


def _time(value: Any) -> datetime | None:
    """A timestamp as trace stores write it: nanoseconds since the epoch, ISO 8601, or a datetime."""
    if value is None or value == "":
        return None
    if isinstance(value, datetime):
        return value if value.tzinfo else value.replace(tzinfo=UTC)
    if isinstance(value, int | float) or (isinstance(value, str) and value.isdigit()):
        return datetime.fromtimestamp(int(value) / 1e9, UTC)
    try:
        parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed if parsed.tzinfo else parsed.replace(tzinfo=UTC)


def _flatten(value: Mapping[str, Any], prefix: str = "") -> dict[str, Any]:
    """Nested mappings as dotted keys (lists kept whole)."""
    out: dict[str, Any] = {}
    for key, item in value.items():
        name = f"{prefix}{key}"
        if isinstance(item, Mapping):
            out.update(_flatten(item, name + "."))
        else:
            out[name] = item
    return out


_INDEXED = re.compile(r"^(.+?)\.(\d+)\.(.+)$")


def _unindex(attrs: dict[str, Any]) -> dict[str, Any]:
    """``llm.input_messages.0.message.content`` and its kin gathered into a list of dicts under
    ``llm.input_messages`` (OpenTelemetry attributes are flat, so OpenInference indexes its lists)."""
    lists: dict[str, dict[int, dict[str, Any]]] = defaultdict(lambda: defaultdict(dict))
    out: dict[str, Any] = {}
    for key, value in attrs.items():
        match = _INDEXED.match(key)
        if match and match.group(1) in _LISTS:
            lists[match.group(1)][int(match.group(2))][match.group(3)] = value
        else:
            out[key] = value
    for key, items in lists.items():
        out.setdefault(key, [items[i] for i in sorted(items)])
    return out


_LISTS = ("llm.input_messages", "llm.output_messages", "retrieval.documents")


def otel_spans(path: Path) -> Iterator[Span]:
    """The spans of an OTLP JSON export (see the module's docstring)."""
    for line, value in _json_values(path):
        requests = value if isinstance(value, list) else [value]
        for request in requests:
            if not isinstance(request, Mapping) or "resourceSpans" not in request:
                raise input_error(path, "not OTLP JSON: no resourceSpans (is --format otel right?)", line=line)
            for resource in request.get("resourceSpans") or []:
                for scope in resource.get("scopeSpans") or resource.get("instrumentationLibrarySpans") or []:
                    for span in scope.get("spans") or []:
                        yield _otel_span(path, line, span)


def _otel_span(path: Path, line: int, span: Mapping[str, Any]) -> Span:
    trace_id = span.get("traceId")
    if not trace_id:
        raise input_error(path, "a span without a traceId", line=line, field="traceId")
    attrs = _otel_attributes(span.get("attributes"))
    questions: list[str | None] = []
    outputs: list[str | None] = []
    for event in span.get("events") or []:
        name, event_attrs = event.get("name", ""), _otel_attributes(event.get("attributes"))
        if name == "gen_ai.client.inference.operation.details":
            for key in ("gen_ai.input.messages", "gen_ai.output.messages"):
                attrs.setdefault(key, event_attrs.get(key))
        elif name in ("gen_ai.content.prompt", "gen_ai.user.message"):
            questions.append(text_of(event_attrs.get("gen_ai.prompt", event_attrs.get("content")), role="user"))
        elif name in ("gen_ai.content.completion", "gen_ai.choice"):
            value = event_attrs.get("gen_ai.completion", event_attrs.get("message", event_attrs.get("content")))
            outputs.append(text_of(value, role="assistant"))
    operation = attrs.get("gen_ai.operation.name")
    kind: Literal["llm", "retrieval", "other"] = (
        "retrieval"
        if operation == "retrieval"
        else "llm"
        if operation in ("chat", "text_completion", "generate_content")
        else "other"
    )
    return Span(
        trace_id=str(trace_id),
        span_id=str(span.get("spanId") or ""),
        parent_id=span.get("parentSpanId") or None,
        kind=kind,
        question=_first(
            [text_of(attrs.get("gen_ai.input.messages"), role="user"), text_of(attrs.get("gen_ai.prompt"), role="user")]
            + questions[-1:]
        ),
        output=_first(
            [
                text_of(attrs.get("gen_ai.output.messages"), role="assistant"),
                text_of(attrs.get("gen_ai.completion"), role="assistant"),
                *outputs[:1],
            ]
        ),
        model=attrs.get("gen_ai.response.model") or attrs.get("gen_ai.request.model"),
        documents=_documents(attrs.get("gen_ai.retrieval.documents")) if kind == "retrieval" else [],
        start=_time(span.get("startTimeUnixNano")),
        end=_time(span.get("endTimeUnixNano")),
        session=attrs.get("gen_ai.conversation.id") or attrs.get("session.id"),
    )


def _otel_attributes(attributes: Any) -> dict[str, Any]:
    return {a["key"]: _otel_value(a.get("value")) for a in attributes or [] if isinstance(a, Mapping) and "key" in a}


def _otel_value(value: Any) -> Any:
    """An OTLP AnyValue (``{"stringValue": ...}``, ``{"arrayValue": {"values": [...]}}``, ...) as Python."""
    if not isinstance(value, Mapping):
        return value
    if "stringValue" in value:
        return value["stringValue"]
    if "intValue" in value:
        return int(value["intValue"])
    if "doubleValue" in value:
        return float(value["doubleValue"])
    if "boolValue" in value:
        return bool(value["boolValue"])
    if "arrayValue" in value:
        return [_otel_value(v) for v in (value["arrayValue"] or {}).get("values") or []]
    if "kvlistValue" in value:
        return _otel_attributes((value["kvlistValue"] or {}).get("values"))
    return None


def langfuse_spans(path: Path) -> Iterator[Span]:
    """Langfuse traces and observations (see the module's docstring) as spans: a trace is its root."""
    for line, value in _json_values(path):
        if isinstance(value, Mapping) and isinstance(value.get("data"), list):
            value = value["data"]
        for item in value if isinstance(value, list) else [value]:
            if not isinstance(item, Mapping) or "id" not in item:
                raise input_error(path, "not a Langfuse trace or observation (no id)", line=line)
            if "traceId" in item and "type" in item:
                yield _langfuse_observation(item)
                continue
            yield Span(
                trace_id=str(item["id"]),
                span_id=str(item["id"]),
                question=text_of(item.get("input"), role="user"),
                output=text_of(item.get("output"), role="assistant"),
                start=_time(item.get("timestamp")),
                session=item.get("sessionId"),
            )
            for observation in item.get("observations") or []:
                if isinstance(observation, Mapping):  # the API's trace detail; ids only in a list
                    yield _langfuse_observation({"traceId": item["id"], **observation})


def _langfuse_observation(item: Mapping[str, Any]) -> Span:
    kind = {"GENERATION": "llm", "RETRIEVER": "retrieval"}.get(str(item.get("type", "")).upper(), "other")
    return Span(
        trace_id=str(item["traceId"]),
        span_id=str(item.get("id")),
        parent_id=item.get("parentObservationId") or str(item["traceId"]),
        kind=kind,  # type: ignore[arg-type]  # one of the three
        question=text_of(item.get("input"), role="user") if kind == "llm" else None,
        output=text_of(item.get("output"), role="assistant") if kind == "llm" else None,
        model=item.get("model") or None,
        documents=_documents(item.get("output")) if kind == "retrieval" else [],
        start=_time(item.get("startTime")),
        end=_time(item.get("endTime")),
    )


def phoenix_spans(path: Path) -> Iterator[Span]:
    """Phoenix spans with OpenInference attributes (see the module's docstring)."""
    if path.suffix.lower() == ".parquet":
        try:
            import pyarrow.parquet as pq
        except ImportError:
            raise InputError("reading Parquet needs pyarrow: pip install 'juge[parquet]'") from None
        rows: Iterable[tuple[int, Any]] = enumerate(pq.read_table(path).to_pylist(), 1)
    else:
        rows = ((line, item) for line, value in _json_values(path) for item in _listed(value))
    for line, row in rows:
        if not isinstance(row, Mapping):
            raise input_error(path, "not a Phoenix span (an object per span)", line=line)
        yield _phoenix_span(path, line, row)


def _listed(value: Any) -> list[Any]:
    if isinstance(value, Mapping) and isinstance(value.get("data"), list):  # the REST API's page
        return list(value["data"])
    return value if isinstance(value, list) else [value]


def _phoenix_span(path: Path, line: int, row: Mapping[str, Any]) -> Span:
    flat = _flatten({k: v for k, v in row.items() if v is not None})
    attrs = _unindex({k.removeprefix("attributes."): v for k, v in flat.items() if k.startswith("attributes.")})
    trace_id = flat.get("context.trace_id")
    if not trace_id:
        raise input_error(path, "a span without context.trace_id", line=line, field="context.trace_id")
    span_kind = str(attrs.get("openinference.span.kind") or flat.get("span_kind") or "").upper()
    kind: Literal["llm", "retrieval", "other"] = {"LLM": "llm", "RETRIEVER": "retrieval"}.get(span_kind, "other")  # type: ignore[assignment]
    messages_in = [_flatten(m) for m in attrs.get("llm.input_messages") or [] if isinstance(m, Mapping)]
    messages_out = [_flatten(m) for m in attrs.get("llm.output_messages") or [] if isinstance(m, Mapping)]
    return Span(
        trace_id=str(trace_id),
        span_id=str(flat.get("context.span_id") or ""),
        parent_id=flat.get("parent_id") or None,
        kind=kind,
        question=(text_of(messages_in, role="user") if messages_in else None)
        or text_of(attrs.get("input.value"), role="user"),
        output=(text_of(messages_out, role="assistant") if messages_out else None)
        or text_of(attrs.get("output.value"), role="assistant"),
        model=attrs.get("llm.model_name"),
        documents=_documents(attrs.get("retrieval.documents") or []) if kind == "retrieval" else [],
        start=_time(flat.get("start_time")),
        end=_time(flat.get("end_time")),
        session=attrs.get("session.id"),
    )


_READERS = {"otel": otel_spans, "langfuse": langfuse_spans, "phoenix": phoenix_spans}
