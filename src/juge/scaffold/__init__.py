"""`juge init`: a new evaluation project that runs offline at once.

The project holds 30 starter cases (support answers of a photo-printing shop), an eval file, one
judge whose rubric lives in its own file (so `juge label` shows people the judge's own words), a
labels template and a README of next steps. The eval's provider is `scripted`: stand-in answers,
so `juge run eval.toml` works before any model is set up. They are written to be imperfect (the
stand-in misses the flaws of one category) so the first calibration has something to find.
"""

from __future__ import annotations

import csv
import io
import json
import re
from pathlib import Path
from typing import TYPE_CHECKING, Literal

from juge.errors import InputError
from juge.files import staged_folder
from juge.scaffold.cases import FACTS, ITEMS

if TYPE_CHECKING:
    from juge.scaffold.results import InitResult

Kind = Literal["passfail", "score", "pairwise"]
KINDS: tuple[str, ...] = ("passfail", "score", "pairwise")
JUDGE_NAMES = {"passfail": "correct", "score": "quality", "pairwise": "better"}
# The category whose flaws the stand-in answers miss: the first calibration finds it.
BLIND_SPOT = "returns"
HOLDOUT_SHARE = 0.3


def _toml(value: str) -> str:
    """A TOML basic string: JSON's string escapes are all valid TOML escapes."""
    return json.dumps(value, ensure_ascii=False)


def starter_cases(kind: str) -> list[dict[str, object]]:
    """The starter cases for `kind`: a single answer (right for two thirds, flawed for a third), or a
    pair with the right answer first in every other case; each with its split (by group, seeded)."""
    from juge.data.readers import split_of

    rows: list[dict[str, object]] = []
    counts: dict[str, int] = {}
    for i, (category, question, good, bad) in enumerate(ITEMS):
        counts[category] = counts.get(category, 0) + 1
        case_id = f"{category}-{counts[category]:02d}"
        row: dict[str, object] = {"id": case_id, "group": case_id, "category": category, "question": question}
        row["context"] = FACTS
        if kind == "pairwise":
            row["output_1"], row["output_2"] = (good, bad) if i % 2 == 0 else (bad, good)
        else:
            row["output"] = bad if i % 3 == 1 else good
        row["split"] = split_of(case_id, holdout=HOLDOUT_SHARE, seed=0)
        rows.append(row)
    return rows


def _rules(kind: str) -> tuple[str, list[tuple[str, str]]]:
    """(default answer, [(regex, answer)]) for the stand-in scripted judge."""
    if kind == "passfail":
        fail = "FAIL\nThe response states something the shop facts do not support."
        rules = [(re.escape(bad), fail) for category, _, _, bad in ITEMS if category != BLIND_SPOT]
        return "PASS\nEvery claim in the response is supported by the shop facts.", rules
    if kind == "score":
        low = "The response contradicts the shop facts, so the customer would act on a wrong answer.\nNOTE: 1"
        rules = [(re.escape(bad), low) for category, _, _, bad in ITEMS if category != BLIND_SPOT]
        return "The response is right and tells the customer what to do next.\nNOTE: 4", rules
    # Pairwise: A when the right answer is shown first (it then comes before </response_a>).
    first = "Response A matches the shop facts; response B does not.\n[[A]]"
    rules = [(re.escape(good) + ".*</response_a>", first) for category, _, good, _ in ITEMS if category != BLIND_SPOT]
    return "Response B matches the shop facts; response A does not.\n[[B]]", rules


def _rubric(kind: str) -> str:
    name = JUDGE_NAMES[kind]
    if kind == "passfail":
        return (
            "# What the judge checks, and what people labelling read beside every item.\n"
            f"name = {_toml(name)}\n"
            'description = "Every fact in the response (prices, times, policies) is supported by the shop '
            "facts in <context>, and the response answers the customer's question. Saying it does not know "
            'and pointing to support passes; an invented or wrong fact fails."\n'
        )
    if kind == "score":
        return (
            "# What the judge scores, and what people labelling read beside every item.\n"
            f"name = {_toml(name)}\n"
            'description = "How well the response answers the customer, given the shop facts in <context>."\n'
            "\n[levels]\n"
            '1 = "Wrong: states a fact the shop facts contradict, or invents one"\n'
            '2 = "Partly right: true but misses what the customer needs"\n'
            '3 = "Right, but vague about what to do next"\n'
            '4 = "Right and tells the customer what to do next"\n'
        )
    return (
        "# What the judge compares, and what people labelling read beside every pair.\n"
        f"name = {_toml(name)}\n"
        'description = "Which response answers the customer correctly, given the shop facts in <context>? '
        'A response with a wrong or invented fact is worse than one that says it does not know."\n'
    )


def _eval(kind: str, judge: str) -> str:
    default, rules = _rules(kind)
    lines = [
        "# Your evaluation: which cases, which judge, and who answers for the judge.",
        "#   juge run eval.toml                     runs it (offline: the answers below are stand-ins)",
        f"#   juge prompt {judge} --case orders-01     shows the exact prompt the judge gets",
        'name = "pixel-paper-support"',
        'cases = "cases.jsonl"',
        "",
        "[[judges]]",
        f'file = "judges/{judge}.toml"',
        "",
        "[engine]",
        "concurrency = 8",
        "",
        *(
            ["[gate]", "min_score = 3                    # a score of 3 or more passes a case", ""]
            if kind == "score"
            else []
        ),
        "# Stand-in answers so the first run needs no model and no key. They are NOT a judge: they",
        f"# miss every flaw in the {BLIND_SPOT!r} category on purpose. For a real model, run",
        "#   juge run eval.toml --provider openai --model gpt-4o-mini                (OPENAI_API_KEY)",
        "#   juge run eval.toml --provider openai --base-url http://127.0.0.1:8080/v1 --model local",
        '# or replace this table with: [provider] name = "openai", options = { base_url = "..." }',
        "[provider]",
        'name = "scripted"',
        "",
        "[provider.options]",
        'model = "stand-in"',
        f"default = {_toml(default)}",
    ]
    for pattern, text in rules:
        lines += ["", "[[provider.options.responses]]", f"match = {_toml(pattern)}", f"text = {_toml(text)}"]
    return "\n".join(lines) + "\n"


def _judge(kind: str, judge: str) -> str:
    return (
        "# The judge: its setup, the model that judges, and its rubric (shared with `juge label`).\n"
        "# Its version is the hash of rubric + template + parser: edit the rubric and a new version is recorded.\n"
        f"name = {_toml(judge)}\n"
        f"setup = {_toml(kind)}\n"
        'model = "gpt-4o-mini"      # --model on the command line overrides it\n'
        'rubric = "../rubric.toml"\n'
    )


def _labels_template(kind: str, rows: list[dict[str, object]]) -> str:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(["item_id", "rater_id", "label"])
    for row in rows:
        writer.writerow([row["id"], "", ""])
    return buf.getvalue()


_LABEL_WORDS = {
    "passfail": "PASS or FAIL",
    "score": "a level from 1 to 4",
    "pairwise": "A (answer 1 better), B (answer 2 better) or tie",
}


def _readme(kind: str, judge: str, n: int) -> str:
    # Policies cover every kind of judge (pairwise, PASS/FAIL, score with a threshold chosen on dev).
    policy = (
        "\n## 6. Decide what the judge may judge alone\n\n"
        "```bash\n"
        "juge policy derive --run RUN_ID --labels labels.jsonl -o JUDGE_POLICY.md --json policy.json\n"
        "juge policy test --policy policy.json --run RUN_ID --labels labels.jsonl   # once, on the holdout\n"
        "```\n\n"
        "A holdout is tested once per machine, recognised by the content of its items, not by project.\n"
        "The starter cases are the same in every `juge init` project, so a second project that tests them\n"
        "is refused (exit 2; `--force` tests again and flags the result FORCED). Test your own cases.\n"
    )
    return f"""# Your evaluation: next steps

Made by `juge init --kind {kind}`: {n} support questions to a photo-printing shop (`cases.jsonl`, with a
dev/holdout `split` by group), the judge `{judge}` (`judges/{judge}.toml`), its rubric (`rubric.toml`),
the eval file (`eval.toml`) and a labels template (`labels-template.csv`). Replace the cases with yours
(JSONL or CSV; `id`, `question`, {"`output_1`, `output_2`" if kind == "pairwise" else "`output`"},
optional `category`, `context`, `reference`, `group`, `meta`).

## 1. Run it (offline)

```bash
juge run eval.toml            # stand-in answers from eval.toml's [provider]: no model, no key
juge show RUN_ID --outcome fail --limit 5
```

## 2. See exactly what the judge reads

```bash
juge prompt {judge} --case orders-01
juge run eval.toml --dry-run      # every judge, the number of calls, no call made
```

## 3. A real judge

```bash
juge run eval.toml --provider openai --model gpt-4o-mini                  # OPENAI_API_KEY
juge run eval.toml --provider openai --base-url http://127.0.0.1:8080/v1 --model local   # no key
```

## 4. Label items yourself (two people, blind)

```bash
juge label init --cases cases.jsonl --task {kind} --rubric rubric.toml --name first --overlap 1
juge label add-rater alice        # prints alice's login link
juge label add-rater bob
juge label serve                  # http://127.0.0.1:8765
juge label export first -o labels.jsonl
```

Or fill `labels-template.csv` by hand: one row per person per item, `rater_id` a name, `label`
{_LABEL_WORDS[kind]}; delete the rows you did not label.

## 5. Can the judge stand in for a person?

```bash
juge calibrate --run RUN_ID --labels labels.jsonl --split all
```

The first line answers it: the categories where the judge agrees with people as well as people agree
with each other, and those where it does not.
{policy}"""


def init_project(directory: str | Path, kind: str = "passfail") -> InitResult:
    """Write a runnable project into `directory` (``juge init``; created, it must not hold files already):
    starter cases, an eval file, one judge of this ``kind`` (passfail, score, pairwise) with its rubric, a
    labels template and a README of next steps. ``juge run eval.toml`` runs it offline at once.

    >>> import juge
    >>> project = juge.init_project("my-eval", kind="pairwise")
    >>> project.judge, project.n_cases, "eval.toml" in project.files
    ('better', 30, True)
    """
    from juge.scaffold.results import InitResult

    if kind not in KINDS:
        raise InputError(f"--kind {kind!r}: choose one of {', '.join(KINDS)}")
    root = Path(directory)
    judge = JUDGE_NAMES[kind]
    rows = starter_cases(kind)
    files = {
        "cases.jsonl": "".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows),
        "rubric.toml": _rubric(kind),
        f"judges/{judge}.toml": _judge(kind, judge),
        "eval.toml": _eval(kind, judge),
        "labels-template.csv": _labels_template(kind, rows),
        "README.md": _readme(kind, judge, len(rows)),
    }
    with staged_folder(root) as folder:
        for relative, text in files.items():
            path = folder / relative
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text, encoding="utf-8")
    return InitResult(directory=str(root), kind=kind, judge=judge, files=list(files), n_cases=len(rows))
