"""A stored run in other tools' formats (``juge export --format inspect|promptfoo|otel``).

- ``inspect``: an Inspect AI eval log (JSON, ``EvalLog`` version 2) that ``inspect view`` opens: one sample per
  case and repeat (epoch), one score per judge (PASS ``C``, FAIL ``I``, a score its number, criteria an object of
  numbers, no verdict ``N``), the judge's raw answer as the explanation; its model as the scorer's model.
- ``promptfoo``: a promptfoo results file (``promptfoo eval -o results.json``, version 3) that ``promptfoo
  import`` and its viewer read: one result per case, one ``llm-rubric`` grade per PASS/FAIL judge (no verdict
  counts as a failed grade, never a pass), a score judge's number as a named score.
- ``otel``: OTLP JSON that a trace store ingests: one span per case, in the trace the case came from when it was
  imported from one (``meta.trace_id``, see ``juge import traces``), with one ``gen_ai.evaluation.result`` event
  per judgment and, given a ``juge route --json`` file, the policy's decision on the span.

What each format cannot carry is listed in the result's ``lost`` (and docs/integrations.md).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.data.records import Case
from juge.errors import InputError, input_error

if TYPE_CHECKING:
    from juge.store import Store

INTEROP_FORMATS = ("inspect", "promptfoo", "otel")
_INSPECT_LETTER = {"PASS": "C", "FAIL": "I"}
_HEX_TRACE = re.compile(r"^[0-9a-f]{32}$")
_HEX_SPAN = re.compile(r"^[0-9a-f]{16}$")


def interop_document(
    store: Store,
    run_id: str,
    fmt: str,
    judgment_rows: list[dict[str, Any]],
    *,
    route: Mapping[str, Any] | None = None,
) -> tuple[Any, int, list[str], int | None]:
    """The run in ``fmt`` from its ``judgment_rows`` (``juge.runs.export.judgment_rows``): (the JSON document,
    judgments written, what the format lost, spans linked to their source trace (otel) or None)."""
    run = store.get_run(run_id)
    cases = {c.id: c for c in store.run_cases(run["id"])}
    rows = [r for r in judgment_rows if r.get("judge") is not None]
    if fmt == "inspect":
        doc, lost = inspect_log(run, cases, rows)
        return doc, len(rows), lost, None
    if fmt == "promptfoo":
        doc, written, lost = promptfoo_results(run, cases, rows)
        return doc, written, lost, None
    doc, linked, lost = otel_export(run, cases, rows, route=route)
    return doc, len(rows), lost, linked


def _kind(rows: list[dict[str, Any]]) -> dict[str, str]:
    """Each judge's kind, from its verdicts: pairwise (an order), criteria, score or passfail."""
    kinds: dict[str, str] = {}
    for r in rows:
        judge, verdict = r["judge"], r.get("verdict")
        if r.get("order"):
            kinds[judge] = "pairwise"
        elif judge not in kinds or kinds[judge] == "unknown":
            kinds[judge] = (
                "criteria"
                if isinstance(verdict, Mapping)
                else "score"
                if isinstance(verdict, int | float) and not isinstance(verdict, bool)
                else "passfail"
                if verdict in ("PASS", "FAIL")
                else "unknown"
            )
    return kinds


def _iso(value: str | None) -> str:
    return value or datetime.now(UTC).isoformat()


# --- Inspect AI ------------------------------------------------------------------------------


def inspect_log(
    run: Mapping[str, Any], cases: Mapping[str, Case], rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], list[str]]:
    from juge import __version__

    kinds = _kind(rows)
    samples: dict[tuple[str, int], dict[str, Any]] = {}
    for r in rows:
        case = cases.get(r["item_id"])
        epoch = int(r.get("repeat") or 0) + 1
        sample = samples.get((r["item_id"], epoch))
        if sample is None:
            sample = samples[(r["item_id"], epoch)] = _inspect_sample(r, case, epoch)
        name = r["judge"] + (f".{r['order']}" if r.get("order") else "")
        sample["scores"][name] = {
            "value": _inspect_value(r),
            "answer": None,
            "explanation": r.get("text") or "",
            "metadata": {
                "juge_outcome": r["outcome"],
                "juge_reason": r.get("reason"),
                "template": r.get("template"),
                "template_hash": r.get("template_hash"),
                # Where Inspect's model-graded scorers keep the grader's answer (and its model).
                "grading": [{"role": "assistant", "content": r.get("text") or "", "model": r.get("model")}],
            },
        }
    scorers: dict[str, Any] = {}
    for r in rows:
        name = r["judge"] + (f".{r['order']}" if r.get("order") else "")
        scorers.setdefault(name, r.get("model"))
    scores = []
    for name in scorers:
        values = [s["scores"][name]["value"] for s in samples.values() if name in s["scores"]]
        metrics = {}
        if kinds.get(name) == "passfail":
            metrics["accuracy"] = {"name": "accuracy", "value": sum(v == "C" for v in values) / max(len(values), 1)}
        numbers = [v for v in values if isinstance(v, int | float) and not isinstance(v, bool)]
        if numbers:
            metrics["mean"] = {"name": "mean", "value": sum(numbers) / len(numbers)}
        scores.append({"name": name, "scorer": name, "params": {}, "metrics": metrics, "scored_samples": len(values)})
    created = _iso(run.get("started_at"))
    models = sorted({str(r.get("model")) for r in rows if r.get("model")})
    log = {
        "version": 2,
        "status": "success" if run.get("status") == "done" else "started",
        "eval": {
            "eval_id": run["id"],
            "run_id": run["id"],
            "created": created,
            "task": run.get("name") or "juge",
            "task_id": run["id"],
            "task_version": 0,
            "dataset": {
                "name": run.get("name") or "juge",
                "location": run.get("dataset_hash"),
                "samples": len(cases),
                "sample_ids": list(cases),
                "shuffled": False,
            },
            # The answers were recorded or generated before judging: the model under evaluation is not
            # juge's to name; the judges' models are the scorers'.
            "model": "none/none",
            "model_args": {},
            "config": {},
            "packages": {"juge": __version__},
            "metadata": {"juge_run_id": run["id"], "dataset_hash": run.get("dataset_hash"), "judge_models": models},
            "scorers": [
                {"name": name, "options": {"model": model}, "metrics": [], "metadata": {}}
                for name, model in scorers.items()
            ],
        },
        "plan": {"name": "juge", "steps": [], "config": {}},
        "results": {"total_samples": len(samples), "completed_samples": len(samples), "scores": scores},
        "stats": {"started_at": created, "completed_at": _iso(run.get("ended_at")), "model_usage": {}},
        "samples": list(samples.values()),
    }
    lost = [
        "the judgments' tokens, cost and latency (Inspect counts usage per model, not per score)",
        "checks",
        "a pairwise judge's combined verdict (each order is its own score, JUDGE.12 and JUDGE.21)",
        "the outcome of a judgment without a verdict (its score is N, NOANSWER; the outcome is in the metadata)",
    ]
    return log, lost


def _inspect_sample(row: Mapping[str, Any], case: Case | None, epoch: int) -> dict[str, Any]:
    question = case.question if case is not None else row.get("question")
    if case is not None and case.messages:
        question = [{"role": m.role, "content": m.content} for m in case.messages]
    if case is not None and case.is_pair:
        answer = f"Answer 1:\n{case.output_1}\n\nAnswer 2:\n{case.output_2}"
    else:
        answer = row.get("output") or ""
    return {
        "id": row["item_id"],
        "epoch": epoch,
        "input": question or "",
        "target": (case.reference if case is not None else None) or "",
        "messages": [],
        "output": {
            "model": "none/none",
            "choices": [
                {"message": {"role": "assistant", "content": answer, "source": "generate"}, "stop_reason": "stop"}
            ],
        },
        "scores": {},
        "metadata": _case_metadata(case, row),
        "store": {},
        "events": [],
        "model_usage": {},
    }


def _case_metadata(case: Case | None, row: Mapping[str, Any]) -> dict[str, Any]:
    meta: dict[str, Any] = {}
    for key in ("group", "category", "split", "context"):
        value = getattr(case, key, None) if case is not None else row.get(key)
        if value:
            meta[key] = value
    if case is not None and case.meta:
        meta["meta"] = case.meta
    return meta


def _inspect_value(row: Mapping[str, Any]) -> Any:
    verdict = row.get("verdict")
    if row["outcome"] != "ok" or verdict is None:
        return "N"
    if isinstance(verdict, str):
        return _INSPECT_LETTER.get(verdict, verdict)
    return verdict


# --- promptfoo -------------------------------------------------------------------------------


def promptfoo_results(
    run: Mapping[str, Any], cases: Mapping[str, Case], rows: list[dict[str, Any]]
) -> tuple[dict[str, Any], int, list[str]]:
    from juge import __version__

    kinds = _kind(rows)
    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        if kinds.get(r["judge"]) in ("passfail", "score", "unknown"):
            by_case.setdefault(r["item_id"], []).append(r)
    results, written, successes, failures, errors = [], 0, 0, 0, 0
    for index, (item_id, judged) in enumerate(by_case.items()):
        case = cases.get(item_id)
        components: list[dict[str, Any]] = []
        named: dict[str, Any] = {}
        for r in judged:
            name = r["judge"] + (f"#{r['repeat'] + 1}" if r.get("repeat") else "")
            if kinds[r["judge"]] == "score":
                if r["outcome"] == "ok":
                    named[name] = r["verdict"]
                continue
            passed = r["outcome"] == "ok" and r.get("verdict") == "PASS"
            reason = r.get("text") or ""
            if r["outcome"] != "ok":
                reason = f"[juge: {r['outcome']}, no verdict] {reason}".rstrip()
            components.append(
                {
                    "assertion": {"type": "llm-rubric", "value": r["judge"], "metric": name},
                    "pass": passed,
                    "score": 1 if passed else 0,
                    "reason": reason,
                    "metadata": {
                        "juge_outcome": r["outcome"],
                        "juge_model": r.get("model"),
                        "template": r.get("template"),
                    },
                }
            )
            written += 1
        written += len(named)
        failed = [c for c in components if not c["pass"]]
        unjudged = any(c["metadata"]["juge_outcome"] != "ok" for c in components)
        success = not failed
        successes, failures, errors = (
            successes + success,
            failures + (bool(failed) and not unjudged),
            errors + unjudged,
        )
        variables = {"id": item_id}
        for key in ("question", "context", "reference", "category", "group"):
            value = getattr(case, key, None) if case is not None else None
            if value:
                variables[key] = value
        output = (case.output if case is not None else None) or judged[0].get("output") or ""
        score = sum(c["score"] for c in components) / len(components) if components else 1
        results.append(
            {
                "id": f"{run['id']}-{index}",
                "testIdx": index,
                "promptIdx": 0,
                "promptId": "juge",
                "prompt": {"raw": variables.get("question", ""), "label": "juge case"},
                "provider": {"id": "juge:recorded", "label": ""},
                "response": {"output": output},
                "vars": variables,
                "testCase": {
                    "description": item_id,
                    "vars": variables,
                    "assert": [c["assertion"] for c in components],
                    "options": {"provider": judged[0].get("model")},
                    "metadata": {},
                },
                "success": success,
                "score": score,
                "namedScores": named,
                "latencyMs": 0,
                "cost": sum(r.get("cost") or 0 for r in judged),
                "gradingResult": {
                    "pass": success,
                    "score": score,
                    "reason": "; ".join(c["reason"] for c in failed) or "All assertions passed",
                    "namedScores": named,
                    "componentResults": components,
                },
                "failureReason": 0 if success else 2 if unjudged else 1,
                "metadata": _case_metadata(case, judged[0]),
            }
        )
    created = _iso(run.get("started_at"))
    document = {
        "evalId": f"juge-{run['id']}",
        "results": {
            "version": 3,
            "timestamp": created,
            "prompts": [{"id": "juge", "raw": "{{question}}", "label": "juge case", "provider": "juge:recorded"}],
            "results": results,
            "stats": {"successes": successes, "failures": failures, "errors": errors, "tokenUsage": {}},
        },
        "config": {"description": run.get("name") or f"juge run {run['id']}"},
        "shareableUrl": None,
        "metadata": {
            "exportedAt": datetime.now(UTC).isoformat(),
            "evaluationCreatedAt": created,
            "juge": {"version": __version__, "run_id": run["id"], "dataset_hash": run.get("dataset_hash")},
        },
    }
    lost = [
        "pairwise and criteria judges (promptfoo grades one output with pass/fail and a score)",
        "no verdict as its own outcome (a grade without a verdict fails, marked [juge: unparsed] in its reason)",
        "checks",
        "the judgments' tokens and latency",
    ]
    skipped = sorted(j for j, k in kinds.items() if k in ("pairwise", "criteria"))
    if skipped:
        lost.insert(0, f"not written: {', '.join(skipped)}")
    return document, written, lost


# --- OpenTelemetry ---------------------------------------------------------------------------


def read_route(path: str | Path) -> dict[str, Any]:
    """The decisions of a ``juge route --json`` file: {"policy_hash", "decisions": {item_id: decision}}."""
    path = Path(path)
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise InputError(f"--route {path}: file not found") from None
    except (UnicodeDecodeError, ValueError) as exc:
        raise input_error(path, f"not JSON: {exc}") from None
    decisions = document.get("decisions") if isinstance(document, Mapping) else None
    if not isinstance(decisions, list):
        raise input_error(path, "not a `juge route --json` file: no decisions list", field="decisions")
    out = {}
    for k, d in enumerate(decisions):
        if (
            not isinstance(d, Mapping)
            or not isinstance(d.get("item_id"), str)
            or d.get("route") not in ("judge", "person")
        ):
            raise input_error(path, "each decision needs item_id and route (judge or person)", field=f"decisions[{k}]")
        out[d["item_id"]] = d
    return {"policy_hash": document.get("policy_hash"), "decisions": out}


def otel_export(
    run: Mapping[str, Any],
    cases: Mapping[str, Case],
    rows: list[dict[str, Any]],
    *,
    route: Mapping[str, Any] | None = None,
) -> tuple[dict[str, Any], int, list[str]]:
    from juge import __version__

    by_case: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_case.setdefault(r["item_id"], []).append(r)
    decisions = (route or {}).get("decisions") or {}
    spans, linked = [], 0
    for item_id, judged in by_case.items():
        case = cases.get(item_id)
        meta = case.meta if case is not None else {}
        source_trace = str(meta.get("trace_id") or "")
        trace_id = source_trace.lower().replace("-", "")
        is_linked = bool(_HEX_TRACE.match(trace_id))
        if is_linked:
            linked += 1
        else:
            trace_id = _hex(f"{run['id']}\x1f{item_id}", 32)
        parent = str(meta.get("span_id") or "")
        times = sorted(r["timestamp"] for r in judged if r.get("timestamp"))
        start = _nanos(times[0]) if times else _nanos(run.get("started_at"))
        end = _nanos(times[-1]) if times else start
        attributes = [
            _attr("gen_ai.operation.name", "evaluate"),
            _attr("juge.run_id", run["id"]),
            _attr("juge.case_id", item_id),
            _attr("juge.dataset_hash", run.get("dataset_hash")),
        ]
        if source_trace and not is_linked:
            attributes.append(_attr("juge.source_trace_id", source_trace))
        decision = decisions.get(item_id)
        if decision is not None:
            attributes += [
                _attr("juge.policy.hash", (route or {}).get("policy_hash")),
                _attr("juge.policy.route", decision.get("route")),
                _attr("juge.policy.reason", decision.get("reason")),
                _attr("juge.policy.decision", decision.get("decision")),
            ]
        events = [_evaluation_event(r) for r in judged]
        span = {
            "traceId": trace_id,
            "spanId": _hex(f"{run['id']}\x1f{item_id}\x1fspan", 16),
            "parentSpanId": parent if _HEX_SPAN.match(parent) else "",
            "name": "juge evaluate",
            "kind": 1,  # SPAN_KIND_INTERNAL
            "startTimeUnixNano": str(start),
            "endTimeUnixNano": str(end),
            "attributes": [a for a in attributes if a is not None],
            "events": events,
            "status": {"code": 0},
        }
        spans.append(span)
    document = {
        "resourceSpans": [
            {
                "resource": {"attributes": [_attr("service.name", "juge")]},
                "scopeSpans": [{"scope": {"name": "juge", "version": __version__}, "spans": spans}],
            }
        ]
    }
    lost = [
        "checks",
        "the case texts (questions and answers stay in the trace store; the span links to them by trace id)",
    ]
    return document, linked, lost


def _evaluation_event(row: Mapping[str, Any]) -> dict[str, Any]:
    """One judgment as the GenAI semantic conventions' ``gen_ai.evaluation.result`` event."""
    verdict, ok = row.get("verdict"), row["outcome"] == "ok"
    value: float | None = None
    label: str
    if ok and verdict in ("PASS", "FAIL"):
        value, label = (1.0 if verdict == "PASS" else 0.0), str(verdict).lower()
    elif ok and isinstance(verdict, int | float) and not isinstance(verdict, bool):
        value, label = float(verdict), str(verdict)
    elif ok and verdict is not None:
        label = verdict if isinstance(verdict, str) else json.dumps(verdict, sort_keys=True)
    else:
        label = str(row["outcome"])  # unparsed, refused, error: no score, never a pass
    name = row["judge"] + (f".{row['order']}" if row.get("order") else "")
    attributes = [
        _attr("gen_ai.evaluation.name", name),
        _attr("gen_ai.evaluation.score.value", value),
        _attr("gen_ai.evaluation.score.label", label),
        _attr("gen_ai.evaluation.explanation", row.get("text") or None),
        _attr("gen_ai.request.model", row.get("model")),
        _attr("juge.outcome", row["outcome"]),
        _attr("juge.template_hash", row.get("template_hash")),
        _attr("juge.repeat", row.get("repeat") or 0),
    ]
    return {
        "timeUnixNano": str(_nanos(row.get("timestamp"))),
        "name": "gen_ai.evaluation.result",
        "attributes": [a for a in attributes if a is not None],
    }


def _attr(key: str, value: Any) -> dict[str, Any] | None:
    """An OTLP KeyValue (None for no value: OTLP has no null)."""
    if value is None:
        return None
    if isinstance(value, bool):
        return {"key": key, "value": {"boolValue": value}}
    if isinstance(value, int):
        return {"key": key, "value": {"intValue": str(value)}}
    if isinstance(value, float):
        return {"key": key, "value": {"doubleValue": value}}
    return {"key": key, "value": {"stringValue": str(value)}}


def _hex(text: str, length: int) -> str:
    return hashlib.sha256(text.encode()).hexdigest()[:length]


def _nanos(value: Any) -> int:
    if not value:
        return 0
    parsed = datetime.fromisoformat(str(value).replace("Z", "+00:00"))
    if parsed.tzinfo is None:
        parsed = parsed.replace(tzinfo=UTC)
    return int(parsed.timestamp()) * 10**9 + parsed.microsecond * 1000
