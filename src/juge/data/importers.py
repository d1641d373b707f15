"""Verdicts written by other evaluation tools, read as recorded judge calls.

- ``inspect:PATH``: an Inspect AI eval log (``.eval`` or ``.json``), read with
  ``inspect_ai.log.read_eval_log`` (``pip install 'juge[inspect]'``). Each sample's score from each
  scorer is one call: the judge is the scorer's name, the model its grader model, the text its
  explanation, the item the sample id (the epoch is the repeat).
- ``promptfoo:PATH``: a promptfoo results file (``promptfoo eval -o results.json``), plain JSON. Each
  ``llm-rubric`` grade is one call: the judge is ``promptfoo/llm-rubric``, the model the grading provider,
  the text the grader's reason, the item the test's ``id`` (or ``item_id``) variable, else its description.

A value read as juge reads a verdict (C/I and yes/no as PASS/FAIL, a number as a score, an object of
criteria as a criteria verdict) or else ``unparsed``; a sample or grade that failed is ``error``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable, Collection, Iterable, Iterator
from pathlib import Path
from typing import Any

from juge.data.readers import file_hash
from juge.data.records import RecordedCall
from juge.errors import InputError, input_error

Imported = tuple[Iterable[RecordedCall], Callable[[], str]]
PREFIXES = ("inspect:", "promptfoo:")
# Inspect's letter grades (CORRECT, INCORRECT); PARTIAL and NOANSWER are no PASS/FAIL verdict.
_INSPECT_LETTERS = {"C": "PASS", "I": "FAIL"}


def importer_for(source: str) -> Callable[[Collection[str]], Imported] | None:
    """The reader of an ``inspect:``/``promptfoo:`` source, or None for any other source."""
    for prefix, read in (("inspect:", inspect_calls), ("promptfoo:", promptfoo_calls)):
        if source.startswith(prefix):
            path = Path(source.removeprefix(prefix))
            if not path.exists():
                raise InputError(f"--judgments {source}: {path}: file not found")
            return _importer(read, path)
    return None


def _importer(read: Callable[[Path], Iterator[RecordedCall]], path: Path) -> Callable[[Collection[str]], Imported]:
    def calls(pair_ids: Collection[str]) -> Imported:  # single grading: pairs are not these tools' verdicts
        return read(path), lambda: file_hash(path)

    return calls


def read_verdict(value: Any) -> Any:
    """A tool's score value as a juge verdict (None: unparsed)."""
    from juge.data.labels import normalise_passfail

    if isinstance(value, bool):
        return "PASS" if value else "FAIL"
    if isinstance(value, int | float):
        return float(value)
    if isinstance(value, dict):
        parsed = {str(k): read_verdict(v) for k, v in value.items()}
        return None if any(v is None or isinstance(v, dict) for v in parsed.values()) else parsed
    if isinstance(value, str):
        text = value.strip()
        if text in _INSPECT_LETTERS:
            return _INSPECT_LETTERS[text]
        try:
            return float(text)
        except ValueError:
            return normalise_passfail(text)
    return None


def inspect_calls(path: Path) -> Iterator[RecordedCall]:
    """The scores of an Inspect AI eval log as recorded calls (see the module's docstring)."""
    try:
        from inspect_ai.log import read_eval_log
    except ImportError:
        raise input_error(path, "reading an Inspect AI log needs inspect_ai: pip install 'juge[inspect]'") from None
    try:
        log = read_eval_log(str(path))
    except Exception as exc:  # inspect raises its own errors for a file that is not a log
        raise input_error(path, f"not a readable Inspect AI eval log ({type(exc).__name__}: {exc})") from None
    scorer_models = {s.name: _model_name((s.options or {}).get("model")) for s in (log.eval.scorers or [])}
    for sample in log.samples or []:
        item_id = sys.intern(str(sample.id))
        if not sample.scores:
            error = sample.error.message if sample.error else "no score"
            for scorer in scorer_models or {"score": None}:
                yield _call(
                    item_id, scorer, scorer_models.get(scorer) or log.eval.model, sample.epoch, error, None, "error"
                )
            continue
        for scorer, score in sample.scores.items():
            model = _grader_model(score.metadata) or scorer_models.get(scorer) or log.eval.model
            verdict = read_verdict(score.value)
            text = score.explanation if score.explanation is not None else str(score.value)
            yield _call(
                item_id, scorer, model, sample.epoch, text, verdict, "ok" if verdict is not None else "unparsed"
            )


def _model_name(option: Any) -> str | None:
    if isinstance(option, str):
        return option
    if isinstance(option, dict) and isinstance(option.get("model"), str):
        return str(option["model"])
    return None


def _grader_model(metadata: dict[str, Any] | None) -> str | None:
    """The model a model-graded scorer's answer came from (its grading messages carry it)."""
    messages = (metadata or {}).get("grading")
    if isinstance(messages, list):
        for message in reversed(messages):
            if isinstance(message, dict) and message.get("role") == "assistant" and message.get("model"):
                return str(message["model"])
    return None


def _call(item_id: str, judge: str, model: str, epoch: int, text: str, verdict: Any, outcome: str) -> RecordedCall:
    return RecordedCall(
        item_id,
        sys.intern(judge),
        sys.intern(str(model)),
        sys.intern(judge),
        "",
        None,
        max(int(epoch or 1) - 1, 0),
        text,
        verdict,
        outcome,  # type: ignore[arg-type]
    )


def promptfoo_calls(path: Path) -> Iterator[RecordedCall]:
    """The llm-rubric grades of a promptfoo results file as recorded calls (see the module's docstring)."""
    try:
        document = json.loads(path.read_text(encoding="utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise input_error(path, f"not a promptfoo results file (JSON): {exc}") from None
    results = document.get("results") if isinstance(document, dict) else None
    rows = results.get("results") if isinstance(results, dict) else results
    if not isinstance(rows, list):
        raise input_error(path, "not a promptfoo results file: no results.results list", field="results")
    combos = {(r.get("promptIdx"), _provider_id(r.get("provider"))) for r in rows if isinstance(r, dict)}
    seen = False
    for k, row in enumerate(rows):
        where = f"results.results[{k}]"
        if not isinstance(row, dict):
            raise input_error(path, "each result must be an object", field=where)
        test = row.get("testCase") or {}
        variables = row.get("vars") or test.get("vars") or {}
        item = variables.get("id", variables.get("item_id", test.get("description")))
        if item in (None, ""):
            item = row.get("testIdx", k)
        item_id = str(item)
        if len(combos) > 1:  # several prompts or providers answered each test: each answer is an item
            item_id += f"/{_provider_id(row.get('provider'))}#{row.get('promptIdx', 0)}"
        grader = _provider_id((test.get("options") or {}).get("provider")) or "promptfoo default grader"
        grading = row.get("gradingResult") or {}
        rubric = 0
        for component in grading.get("componentResults") or []:
            assertion = component.get("assertion") or {}
            if assertion.get("type") != "llm-rubric":
                continue
            seen = True
            judge = "promptfoo/llm-rubric" + (f"#{rubric + 1}" if rubric else "")
            rubric += 1
            passed = component.get("pass")
            verdict = ("PASS" if passed else "FAIL") if isinstance(passed, bool) else None
            reason = str(component.get("reason") or "")
            outcome = "ok" if verdict is not None else "unparsed"
            if verdict is None and row.get("error"):
                outcome = "error"
            yield _call(sys.intern(item_id), judge, grader, 1, reason, verdict, outcome)
        if (
            rubric == 0
            and row.get("error")
            and any((a or {}).get("type") == "llm-rubric" for a in test.get("assert") or [])
        ):
            seen = True
            yield _call(sys.intern(item_id), "promptfoo/llm-rubric", grader, 1, str(row["error"]), None, "error")
    if not seen:
        raise input_error(path, "no llm-rubric grade in this promptfoo results file", field="results")


def _provider_id(provider: Any) -> str:
    if isinstance(provider, str):
        return provider
    if isinstance(provider, dict):
        return str(provider.get("label") or provider.get("id") or "")
    return ""
