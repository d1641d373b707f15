"""The rubric shown beside every item, and the labels a rater can give.

The rubric is the judge's rubric file (`juge.judges.rubric`, TOML), so people and
the judge read the same words::

    name = "helpfulness"
    description = "How well the answer meets the user's need."
    levels = { 1 = "Useless or wrong", 3 = "Partly helpful", 5 = "Fully helpful" }   # score task
    items = ["Answers the question asked", "No factual errors"]                         # optional
    [criteria.correctness]                                                              # optional
    description = "Facts, numbers and code are right."
    levels = { 1 = "Mostly wrong", 2 = "Minor errors", 3 = "Correct" }

Raters see the name, description, levels, items and criteria (never the few-shot
examples, which show a judge's answer format). The labels depend on the task:

- ``pairwise``: stored as ``A`` (answer 1 better), ``B`` (answer 2 better) or ``tie``,
  always in the fixed order of the case. The page shows the answers as Left/Right in
  a position randomised per rater and item; keys 1 (left), 2 (right), 3 (tie).
- ``passfail``: ``PASS`` or ``FAIL`` (as PASS/FAIL judges and `juge calibrate` write them;
  labels stored as ``pass``/``fail`` by earlier versions read as the same); keys p and f.
- ``score``: the rubric's ``levels`` (2 to 10 consecutive integers). Single-digit
  levels are their own keys; otherwise levels get keys 1..9, 0 in order (so 1..10
  is typed 1..9, 0).

Every choice leaves e (add a note) and u (undo) free.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from juge.data.labels import normalise_passfail
from juge.errors import input_error
from juge.judges.judge import JudgeSpec, load_judge
from juge.judges.rubric import Rubric, load_rubric, read_toml

# What a rubric's tags for the judge (its prompt's blocks) are called on a rater's page: people see a "Context"
# section, not a <context> tag.
_TAG_WORDS = {
    "question": "the question",
    "conversation": "the conversation",
    "context": "the context",
    "source": "the source",
    "reference": "the reference answer",
    "response": "the answer",
    "response_a": "the first answer",
    "response_b": "the second answer",
}
_TAG = re.compile(r"<(" + "|".join(_TAG_WORDS) + r")>")


def for_people(text: str) -> str:
    """A rubric's text as a rater reads it: the judge's block tags (``in <context>``) as words (``in the context``)."""
    return _TAG.sub(lambda m: _TAG_WORDS[m.group(1)], text)


TASKS = ("pairwise", "score", "passfail")
POSITIONAL_KEYS = "1234567890"
JUDGE_ONLY_KEYS = set(JudgeSpec.model_fields) - set(Rubric.model_fields)  # setup, model, provider, template, ...


@dataclass(frozen=True)
class Choice:
    """One label a rater can give: the stored value, its key and the text on its button."""

    value: str
    key: str
    text: str


def read_rubric(path: str | Path, task: str) -> Rubric:
    """Read the rubric at `path` and check it can drive `task`; errors name the file and field.

    `path` is a rubric TOML or a judge file: a file with judge keys (setup, model, provider, ...)
    is loaded as the judge (`load_judge`), so people read exactly the rubric the judge reads, and
    its setup must be the task (passfail, pairwise or score).
    """
    if task not in TASKS:
        raise input_error(path, f"unknown task {task!r}; use one of {', '.join(TASKS)}")
    if set(read_toml(Path(path))) & JUDGE_ONLY_KEYS:
        judge = load_judge(path)
        if judge.setup != task:
            raise input_error(
                path,
                f"this is a {judge.setup} judge; it cannot be the rubric of a {task} "
                f"labelling task (use --task {judge.setup} or a {task} judge)"
                if judge.setup in TASKS
                else f"this is a {judge.setup} judge; people label with a passfail, pairwise or score rubric",
                field="setup",
            )
        rubric = judge.rubric
    else:
        rubric = load_rubric(path)
    if task == "score" and not (rubric.levels and 2 <= len(rubric.levels) <= 10):
        raise input_error(
            path, 'a score task needs 2 to 10 described levels, e.g. levels = { 1 = "...", 5 = "..." }', field="levels"
        )
    return rubric


def choices(task: str, rubric: Rubric) -> list[Choice]:
    """The labels a rater can give for `task`, in display order (pairwise values are positional)."""
    if task == "pairwise":
        return [
            Choice("left", "1", "Left is better"),
            Choice("right", "2", "Right is better"),
            Choice("tie", "3", "Tie"),
        ]
    if task == "passfail":
        return [Choice("PASS", "p", "Pass"), Choice("FAIL", "f", "Fail")]
    levels = rubric.levels or {}
    own_keys = all(0 <= level <= 9 for level in levels)
    return [
        Choice(str(level), str(level) if own_keys else POSITIONAL_KEYS[i], f"{level} · {text}")
        for i, (level, text) in enumerate(levels.items())
    ]


def to_fixed_order(choice: str, swapped: bool) -> str:
    """Map a positional pairwise choice to the fixed order: left/right -> A/B, undone when swapped.

    Not swapped: answer 1 is on the left, so left = A. Swapped: answer 2 is on the left, so left = B.
    """
    if choice == "tie":
        return "tie"
    if choice not in ("left", "right"):
        raise ValueError(f"unknown pairwise choice {choice!r}")
    left_is_a = not swapped
    return "A" if (choice == "left") == left_is_a else "B"


def canonical_label(task: str, label: object) -> str:
    """One spelling per label, so people, adjudicators and judges compare equal.

    passfail: ``PASS``/``FAIL`` from any usual spelling (pass, fail, true, ...; `normalise_passfail`);
    score: an integral number as its integer text (a judge's 4.0 is the level "4"); other labels as text.
    """
    if task == "passfail":
        return normalise_passfail(label) or str(label)
    if task == "score" and isinstance(label, float) and label.is_integer():
        return str(int(label))
    return str(label)


def export_value(task: str, label: str) -> str | int:
    """A stored label as written to the export: score levels are integers, PASS/FAIL upper case, others text."""
    return int(label) if task == "score" else canonical_label(task, label)
