"""Candidate judges for `juge tune`: the judge as given, judge files the user wrote, and variants
generated from the judge's own TOML (few-shot examples, verdict-only, reference on/off, solve-first,
a coarser scale).

A variant is a function of the labelled items it may learn from: fixed variants ignore them;
few-shot variants take their examples from them. `juge tune` calls it once per fold with the other
folds' items (so no verdict rests on its own group's labels) and once with all of dev for the
judge it writes out.
"""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from juge.data.records import Case
from juge.errors import InputError
from juge.judges.judge import Judge, judge_from_dict
from juge.judges.rubric import read_toml

RUBRIC_KEYS = ("rubric", "description", "levels", "items", "criteria", "examples")
SHOTS = (2, 4, 8)


@dataclass(frozen=True)
class LabelledItem:
    """A dev item with its human labels, as a few-shot example can show it."""

    case: Case
    labels: tuple[Any, ...]  # comparable labels: A/B/tie, PASS/FAIL or numbers
    explanation: str | None


@dataclass(frozen=True)
class Variant:
    name: str
    what: str
    learns: bool  # its spec depends on the labelled items it is given (few-shot, proposals)
    make: Callable[[Sequence[LabelledItem]], dict[str, Any]]
    verdict_map: Callable[[Any], Any] | None = None  # a coarser scale's verdict in the labels' scale
    example_ids: Callable[[Sequence[LabelledItem]], list[str]] | None = None


def constant(spec: dict[str, Any]) -> Callable[[Sequence[LabelledItem]], dict[str, Any]]:
    """A variant that learns nothing from the labelled items."""

    def make(_: Sequence[LabelledItem]) -> dict[str, Any]:
        return spec

    return make


def base_spec(path: Path) -> tuple[dict[str, Any], Judge]:
    """The judge file's table with its rubric inlined (so variants can add examples to it)."""
    from juge.judges import load_judge

    judge = load_judge(path)
    data = {k: v for k, v in read_toml(path).items() if k not in RUBRIC_KEYS}
    data["rubric"] = judge.rubric.model_dump(mode="json", exclude_none=True)
    template = data.get("template")
    if isinstance(template, str) and (path.parent / template).is_file():
        data["template"] = str((path.parent / template).resolve())
    for key in ("solve_template",):
        value = data.get(key)
        if isinstance(value, str) and (path.parent / value).is_file():
            data[key] = str((path.parent / value).resolve())
    return data, judge


def build(spec: Mapping[str, Any], name: str, base_dir: Path, source: str) -> Judge:
    return judge_from_dict(dict(spec) | {"name": name}, base_dir=base_dir, source=source)


def majority(labels: Sequence[Any]) -> Any | None:
    """The most common label, or None when two labels tie for most common."""
    top = Counter(labels).most_common(2)
    if not top or (len(top) == 2 and top[0][1] == top[1][1]):
        return None
    return top[0][0]


def pick_examples(items: Sequence[LabelledItem], k: int, seed: int) -> list[LabelledItem]:
    """`k` items with a clear majority label, balanced over labels (round-robin), seeded."""
    by_label: dict[Any, list[LabelledItem]] = {}
    for it in sorted(items, key=lambda it: it.case.id):
        label = majority(it.labels)
        if label is not None:
            by_label.setdefault(label, []).append(it)
    rng = random.Random(seed)
    for pool in by_label.values():
        rng.shuffle(pool)
    chosen: list[LabelledItem] = []
    order = sorted(by_label, key=str)
    while len(chosen) < k and any(by_label.values()):
        for label in order:
            if by_label[label] and len(chosen) < k:
                chosen.append(by_label[label].pop())
    return chosen


NO_NOTE = "A person who read it gave this verdict."


def example_judgment(judge: Judge, label: Any, explanation: str | None) -> str:
    """The exact answer the judge's format asks for, with the person's explanation as the reason.

    The note is untrusted text: on one line (no line of its own can pose as a verdict), neutralised where the
    prompt shows it (`Judge.render`), and dropped for `NO_NOTE` when the answer it makes would not parse (a
    note that states another verdict, "... always answer PASS" under a FAIL, would teach the judge to write
    answers that say two things)."""
    reason = " ".join((explanation or "").split()) or NO_NOTE
    text = _answer(judge, label, reason)
    if reason != NO_NOTE and judge.parse(text).outcome != "ok":
        return _answer(judge, label, NO_NOTE)
    return text


def _answer(judge: Judge, label: Any, reason: str) -> str:
    if judge.constrained:  # the verdict alone, exactly as the judge is asked to answer
        return {"A": "A", "B": "B", "tie": "C"}[label] if judge.setup == "pairwise" else str(label)
    if judge.setup == "passfail":
        return f"{label}\n{reason}"
    if judge.setup == "pairwise":
        letter = {"A": "A", "B": "B", "tie": "C"}[label]
        return f"{reason}\n[[{letter}]]"
    if judge.setup == "score":
        return f"{reason}\n{judge.parser_config['marker']} {int(label)}"
    raise InputError(f"few-shot examples are generated for passfail, score and pairwise judges, not {judge.setup}")


def example(judge: Judge, item: LabelledItem) -> dict[str, Any]:
    case = item.case
    data: dict[str, Any] = {"question": case.question}
    if case.context:
        data["context"] = case.context
    if judge.reference and case.reference:
        data["reference"] = case.reference
    if judge.setup == "pairwise":
        data |= {"response_a": case.output_1, "response_b": case.output_2}
    else:
        data["response"] = case.output
    label = majority(item.labels)
    return data | {"judgment": example_judgment(judge, label, item.explanation)}


def generate(
    spec: Mapping[str, Any],
    judge: Judge,
    *,
    has_reference: bool,
    threshold: float | None,
    shots: Sequence[int] = SHOTS,
    seed: int = 0,
) -> list[Variant]:
    """The generated variants that apply to this judge (the judge as given first)."""
    fixed = dict(spec)
    out = [Variant("as-given", "the judge as given", False, constant(fixed))]
    can_show = judge.setup in ("passfail", "score", "pairwise") and not judge.rubric.examples
    for k in shots if can_show else ():

        def with_examples(items: Sequence[LabelledItem], k: int = k) -> dict[str, Any]:
            chosen = pick_examples(items, k, seed)
            rubric = dict(fixed["rubric"]) | {"examples": [example(judge, it) for it in chosen]}
            return fixed | {"rubric": rubric}

        def ids(items: Sequence[LabelledItem], k: int = k) -> list[str]:
            return [it.case.id for it in pick_examples(items, k, seed)]

        out.append(
            Variant(
                f"fewshot-{k}",
                f"{k} worked examples from labelled dev items, balanced by label",
                True,
                with_examples,
                example_ids=ids,
            )  # fmt: skip
        )
    toggles: list[tuple[str, str, dict[str, Any]]] = []
    if judge.allowed() is not None:
        toggles.append(
            ("reasoning", "reasoning before the verdict", {"constrained": False})
            if judge.constrained
            else ("verdict-only", "the verdict alone, no reasoning (constrained)", {"constrained": True})
        )
    if has_reference and not judge.reference and "template" not in fixed:
        toggles.append(("reference", "the reference answer in the prompt", {"reference": True}))
    if judge.reference and "template" not in fixed:
        toggles.append(("no-reference", "without the reference answer", {"reference": False}))
    if not judge.solve_first:
        toggles.append(("solve-first", "the judge answers the question itself first", {"solve_first": True}))
    for name, what, change in toggles:
        out.append(Variant(name, what, False, constant(fixed | change)))
    coarse = _coarser_scale(fixed, judge, threshold)
    if coarse is not None:
        out.append(coarse)
    return out


def _coarser_scale(spec: Mapping[str, Any], judge: Judge, threshold: float | None) -> Variant | None:
    """Score judges on a scale wider than 1-4 get a 1-4 variant with described levels. Its verdicts are
    mapped linearly back onto the judge's scale, so they are compared with the labels at --threshold."""
    if judge.setup != "score" or threshold is None:
        return None
    lo, hi = judge.parser_config.get("lo"), judge.parser_config.get("hi")
    if lo is None or hi is None or hi - lo + 1 <= 4 or judge.parser_config.get("rescale_from") is not None:
        return None
    what = judge.rubric.description
    levels = {
        "1": f"Does not meet this at all: {what}",
        "2": "Meets it partly; important parts are missing or wrong.",
        "3": "Mostly meets it; minor gaps only.",
        "4": "Fully meets it.",
    }
    rubric = {k: v for k, v in spec["rubric"].items() if k != "levels"} | {"levels": levels}
    coarse = dict(spec) | {"rubric": rubric, "scale": [1, 4]}
    return Variant(
        "scale-1-4",
        f"a 1-4 scale with described levels (mapped back onto {lo}-{hi})",
        False,
        constant(coarse),
        verdict_map=lambda v: lo + (float(v) - 1) * (hi - lo) / 3,
    )


def from_files(folder: Path) -> list[tuple[str, Path]]:
    """The judge files a user wrote as candidates (`--variants DIR`), by file stem."""
    if not folder.is_dir():
        raise InputError(f"--variants {folder}: not a folder of judge files (TOML)")
    files = sorted(folder.glob("*.toml"))
    if not files:
        raise InputError(f"--variants {folder}: no judge file (*.toml) in it")
    return [(f"file:{p.stem}", p) for p in files]
