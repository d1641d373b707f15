"""`juge export --format inspect|promptfoo|otel`: a run of cases imported from traces, written for other tools.
Each output parses as its tool reads it: the Inspect log as Inspect's EvalLog (and juge's `inspect:` reader),
the promptfoo file with the keys of a file promptfoo wrote (and juge's `promptfoo:` reader), the OTel file as an
OTLP ExportTraceServiceRequest whose spans sit in the traces the cases came from, with the policy's decisions."""

from __future__ import annotations

import base64
import json
import sqlite3
from pathlib import Path

import pytest

from cli_helpers import run_cli
from juge.data.importers import promptfoo_calls
from juge.data.traces import import_traces, otel_spans
from juge.runs.api import run as run_eval

FIXTURES = Path(__file__).parents[1] / "data" / "fixtures"
SOURDOUGH, GLUTEN, SUNDAY = (
    "5b8aa5a2d2c872e8321cf37308d69df2",
    "0af7651916cd43dd8448eb211c80319c",
    "4bf92f3577b34da6a3ce929d0e0e4736",
)
# faithful: FAIL on the sourdough trace, no verdict (bold, unparsed) on the gluten-free one, PASS on Sunday.
EXPECTED = {SOURDOUGH: ("FAIL", "ok"), GLUTEN: (None, "unparsed"), SUNDAY: ("PASS", "ok")}
EVAL = """name = "traces"
cases = "cases.jsonl"

[[judges]]
name = "faithful"
setup = "passfail"
description = "Every claim in the response is supported."
model = "judge-1"
provider = "scripted"
[judges.provider_options]
model = "judge-1"
default = "PASS\\nSupported."
responses = [{ match = "sourdough", text = "FAIL\\nNo price in the facts." }, { match = "gluten-free bread", text = "**PASS**" }]

[[judges]]
name = "helpful"
setup = "score"
description = "How helpful is the response?"
levels = { 1 = "not", 2 = "partly", 3 = "fully" }
model = "judge-2"
provider = "scripted"
provider_options = { model = "judge-2", default = "Fine.\\nNOTE: 3" }
"""


@pytest.fixture
def traced_run(tmp_path: Path) -> tuple[Path, str]:
    """A run of two judges over the cases imported from the OTel fixture: (db, run id)."""
    import_traces(FIXTURES / "traces" / "otel.jsonl", tmp_path / "cases.jsonl", format="otel")
    (tmp_path / "eval.toml").write_text(EVAL, encoding="utf-8")
    db = tmp_path / "j.db"
    return db, run_eval(tmp_path / "eval.toml", db=db).run_id


def export(monkeypatch, capsys, db: Path, run_id: str, fmt: str, out: Path, *extra: str) -> dict:
    summary = out.with_suffix(".export.json")
    code, _, err = run_cli(
        monkeypatch, capsys, "export", run_id, "--format", fmt, "-o", str(out), "--db", str(db),
        "--json", str(summary), *extra,
    )  # fmt: skip
    assert code == 0, err
    return json.loads(summary.read_text())


def key_paths(value, prefix: str = "") -> set[str]:
    """Every key path of a JSON value (lists: their items' keys under `[]`)."""
    out = set()
    if isinstance(value, dict):
        for k, v in value.items():
            out.add(prefix + k)
            out |= key_paths(v, prefix + k + ".")
    elif isinstance(value, list):
        for item in value:
            out |= key_paths(item, prefix + "[].")
    return out


def test_promptfoo_results_have_promptfoos_shape_and_read_back(tmp_path, monkeypatch, capsys, traced_run):
    db, run_id = traced_run
    out = tmp_path / "results.json"
    summary = export(monkeypatch, capsys, db, run_id, "promptfoo", out)
    written = json.loads(out.read_text())
    real = json.loads((FIXTURES / "promptfoo_results.json").read_text())
    # The keys promptfoo's viewer reads, as promptfoo 0.121 wrote them, are all in ours.
    wanted = {"evalId", "results", "config", "metadata", "results.version", "results.timestamp", "results.prompts"}
    row_keys = {"id", "testIdx", "promptIdx", "prompt", "provider", "response", "vars", "testCase", "success",
                "score", "namedScores", "gradingResult", "failureReason", "latencyMs", "cost"}  # fmt: skip
    grading = {"pass", "score", "reason", "componentResults"}
    component = {"assertion", "pass", "score", "reason"}
    for name, keys, ours, theirs in (
        ("top", wanted, key_paths(written), key_paths(real)),
        ("row", row_keys, set(written["results"]["results"][0]), set(real["results"]["results"][0])),
        ("grading", grading, set(written["results"]["results"][0]["gradingResult"]), set(real["results"]["results"][0]["gradingResult"])),
        ("component", component, set(written["results"]["results"][0]["gradingResult"]["componentResults"][0]),
         set(real["results"]["results"][0]["gradingResult"]["componentResults"][0])),
    ):  # fmt: skip
        assert keys <= theirs, name  # the keys are promptfoo's ...
        assert keys <= ours, name  # ... and ours has them
    assert written["results"]["version"] == real["results"]["version"] == 3
    rows = {r["vars"]["id"]: r for r in written["results"]["results"]}
    assert {k: r["success"] for k, r in rows.items()} == {SOURDOUGH: False, GLUTEN: False, SUNDAY: True}
    assert rows[GLUTEN]["failureReason"] == 2 and rows[SOURDOUGH]["failureReason"] == 1  # error vs failed grade
    assert rows[SUNDAY]["namedScores"] == {"helpful": 3.0}  # the score judge's number
    assert rows[SUNDAY]["vars"]["context"].startswith("Open Tuesday to Sunday")
    # juge's own promptfoo reader gets the PASS/FAIL grades back; no verdict comes back as a FAIL, never a PASS.
    calls = {c.item_id: c for c in promptfoo_calls(out)}
    assert {k: calls[k].verdict for k in EXPECTED} == {SOURDOUGH: "FAIL", GLUTEN: "FAIL", SUNDAY: "PASS"}
    assert summary["format"] == "promptfoo" and summary["rows"] == 6 and summary["lost"]


def test_inspect_log_has_evallog_shape(tmp_path, monkeypatch, capsys, traced_run):
    db, run_id = traced_run
    out = tmp_path / "log.json"
    summary = export(monkeypatch, capsys, db, run_id, "inspect", out)
    log = json.loads(out.read_text())
    assert log["version"] == 2 and log["status"] == "success"
    for key in ("created", "task", "dataset", "model", "config"):  # EvalSpec's required fields
        assert key in log["eval"], key
    samples = {s["id"]: s for s in log["samples"]}
    assert set(samples) == set(EXPECTED)
    values = {k: s["scores"]["faithful"]["value"] for k, s in samples.items()}
    assert values == {SOURDOUGH: "I", GLUTEN: "N", SUNDAY: "C"}  # no verdict is NOANSWER, never CORRECT
    assert {s["scores"]["helpful"]["value"] for s in samples.values()} == {3.0}
    assert samples[SUNDAY]["input"] == "Are you open on Sunday?" and samples[SUNDAY]["epoch"] == 1
    assert samples[SUNDAY]["scores"]["faithful"]["explanation"] == "PASS\nSupported."
    scores = {s["name"]: s["metrics"] for s in log["results"]["scores"]}
    assert scores["faithful"]["accuracy"]["value"] == pytest.approx(1 / 3)
    assert summary["rows"] == 6


@pytest.mark.slow  # importing inspect_ai takes seconds
@pytest.mark.needs("inspect_ai")
def test_inspect_reads_the_log(tmp_path, monkeypatch, capsys, traced_run):
    from inspect_ai.log import read_eval_log

    from juge.data.importers import inspect_calls

    db, run_id = traced_run
    out = tmp_path / "log.json"
    export(monkeypatch, capsys, db, run_id, "inspect", out)
    log = read_eval_log(str(out))  # Inspect's own reader validates the EvalLog
    assert len(log.samples) == 3 and log.results.scores[0].name == "faithful"
    calls = {(c.item_id, c.judge): c for c in inspect_calls(out)}
    assert {k: (calls[(k, "faithful")].verdict, calls[(k, "faithful")].outcome) for k in EXPECTED} == EXPECTED
    assert calls[(SUNDAY, "faithful")].model == "judge-1" and calls[(SUNDAY, "helpful")].verdict == 3.0


def as_protobuf_json(text: str) -> str:
    """OTLP JSON as protobuf's JSON mapping reads it: OTLP writes trace and span ids as hex where protobuf
    expects base64 (the spec's one deviation); json_format.Parse is strict about every other field."""
    document = json.loads(text)
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                for key, size in (("traceId", 16), ("spanId", 8), ("parentSpanId", 8)):
                    raw = bytes.fromhex(span[key])
                    assert len(raw) in (size, 0 if key == "parentSpanId" else size), key
                    span[key] = base64.b64encode(raw).decode()
    return json.dumps(document)


def test_otel_spans_join_the_source_traces_with_verdicts_and_decisions(tmp_path, monkeypatch, capsys, traced_run):
    from google.protobuf import json_format
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

    db, run_id = traced_run
    route = tmp_path / "route.json"
    route.write_text(
        json.dumps(
            {
                "policy_hash": "abc123",
                "decisions": [
                    {"item_id": SUNDAY, "category": "", "route": "judge", "reason": "judge_ok", "detail": "",
                     "decision": "judge", "verdict": "PASS"},
                    {"item_id": SOURDOUGH, "category": "", "route": "person", "reason": "low_agreement",
                     "detail": "", "decision": "person: low_agreement"},
                ],
            }
        ),
        encoding="utf-8",
    )  # fmt: skip
    out = tmp_path / "verdicts.json"
    summary = export(monkeypatch, capsys, db, run_id, "otel", out, "--route", str(route))
    request = json_format.Parse(as_protobuf_json(out.read_text()), ExportTraceServiceRequest())
    spans = [s for rs in request.resource_spans for ss in rs.scope_spans for s in ss.spans]
    assert {s.trace_id.hex() for s in spans} == set(EXPECTED)  # each verdict in the trace its case came from
    source_roots = {"4bf92f3577b34da6a3ce929d0e0e4736": "a000000000000001", SOURDOUGH: "c000000000000001",
                    GLUTEN: "b000000000000001"}  # fmt: skip
    assert {s.trace_id.hex(): s.parent_span_id.hex() for s in spans} == source_roots
    by_trace = {s.trace_id.hex(): s for s in spans}

    def attrs(items) -> dict:
        return {a.key: json_format.MessageToDict(a.value) for a in items}

    events = {
        t: {attrs(e.attributes)["gen_ai.evaluation.name"]["stringValue"]: attrs(e.attributes) for e in s.events}
        for t, s in by_trace.items()
    }
    assert all(e.name == "gen_ai.evaluation.result" for s in spans for e in s.events)
    assert events[SUNDAY]["faithful"]["gen_ai.evaluation.score.value"] == {"doubleValue": 1.0}
    assert events[SUNDAY]["faithful"]["gen_ai.evaluation.score.label"] == {"stringValue": "pass"}
    assert events[SOURDOUGH]["faithful"]["gen_ai.evaluation.score.value"] == {"doubleValue": 0.0}
    assert "gen_ai.evaluation.score.value" not in events[GLUTEN]["faithful"]  # no verdict: no score
    assert events[GLUTEN]["faithful"]["gen_ai.evaluation.score.label"] == {"stringValue": "unparsed"}
    assert events[SUNDAY]["helpful"]["gen_ai.evaluation.score.value"] == {"doubleValue": 3.0}
    span_attrs = {t: attrs(s.attributes) for t, s in by_trace.items()}
    assert span_attrs[SUNDAY]["juge.policy.route"] == {"stringValue": "judge"}
    assert span_attrs[SOURDOUGH]["juge.policy.decision"] == {"stringValue": "person: low_agreement"}
    assert "juge.policy.route" not in span_attrs[GLUTEN]  # no decision for it: none made up
    assert summary["linked"] == 3 and summary["decisions"] == 2
    # juge's own trace reader reads it back as spans of the same traces.
    assert {s.trace_id for s in otel_spans(out)} == set(EXPECTED)


def test_otel_without_a_source_trace_and_bad_options(tmp_path, monkeypatch, capsys):
    (tmp_path / "cases.jsonl").write_text('{"id": "a", "question": "q?", "output": "o."}\n', encoding="utf-8")
    (tmp_path / "eval.toml").write_text(EVAL, encoding="utf-8")
    db = tmp_path / "j.db"
    run_id = run_eval(tmp_path / "eval.toml", db=db).run_id
    summary = export(monkeypatch, capsys, db, run_id, "otel", tmp_path / "o.json")
    (span,) = json.loads((tmp_path / "o.json").read_text())["resourceSpans"][0]["scopeSpans"][0]["spans"]
    assert len(span["traceId"]) == 32 and span["parentSpanId"] == "" and summary["linked"] == 0
    out = tmp_path / "x.json"
    for args, needle in (
        (("--format", "inspect", "--route", str(tmp_path / "o.json")), "--route"),
        (("--format", "promptfoo", "--wide"), "--wide"),
        (("--format", "parquett"), "--format"),
    ):
        code, _, err = run_cli(monkeypatch, capsys, "export", run_id, "-o", str(out), "--db", str(db), *args)
        assert code == 2 and needle in err and not out.exists(), args
    with sqlite3.connect(db) as conn:  # nothing was written to the store by an export
        assert conn.execute("SELECT count(*) FROM runs").fetchone() == (1,)
