"""What `juge tune` writes: the chosen judge (TOML, with provenance), TUNING.md and tuning.json.

All are staged as temporary files before the search and moved into place together at the end, so an
unwritable folder fails first and an interrupted or failed tune leaves no half-written folder behind.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

import tomli_w

from juge.files import staged
from juge.reports.render import render_html
from juge.stats.estimate import format_estimate
from juge.tune.models import CandidateResult, Caught, ReferenceRow, TuneResult


def _diff(est: dict[str, Any] | None) -> str:
    return "—" if not est or est.get("value") is None else format_estimate(est, signed=True)


def _cell(text: str) -> str:
    """Markdown table cell: names and descriptions may hold | or newlines."""
    return " ".join(str(text).split()).replace("|", "\\|")


def _measure(result: TuneResult) -> str:
    return "kappa" if result.measure == "kappa" else "agreement"


def _holdout_value(result: TuneResult) -> dict[str, Any]:
    held = result.holdout
    assert held is not None
    return (held.kappa if result.measure == "kappa" else None) or held.agreement


def _ranking_note(result: TuneResult) -> str:
    if result.measure != "kappa":
        return "Ranked by agreement with each person; person vs person and a trivial baseline are shown beside."
    bar = "" if result.failures_bar is None else f" ({result.failures_bar:.3f} on dev)"
    return (
        "Ranked by Cohen's kappa with each person, never by raw agreement alone; a candidate that catches "
        f"fewer failures than one person catches of another's{bar} is never chosen. Person vs person and "
        "an always-PASS judge are shown beside the candidates."
    )


def _caught(caught: Caught | None) -> str:
    return "—" if caught is None else f"{format_estimate(caught.rate)} (caught {caught.k} of {caught.n})"


def candidate_table(result: TuneResult) -> list[str]:
    """The candidates with the person-vs-person ceiling and the trivial baseline beside them."""
    passfail = result.measure == "kappa"
    head = ["candidate", "what", "kappa", "agreement"] if passfail else ["candidate", "what", "agreement"]
    head += ["failures caught", "false flags"] if passfail else []
    head += ["difference to best", "cost per item", "decision"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]

    def figures(row: CandidateResult | ReferenceRow) -> list[str]:
        cells = (
            [format_estimate(row.kappa), format_estimate(row.agreement)]
            if passfail
            else [format_estimate(row.agreement)]
        )
        return cells + ([_caught(row.failures_caught), _caught(row.false_flags)] if passfail else [])

    for c in result.candidates:
        lines.append("| " + " | ".join([f"`{_cell(c.name)}`", _cell(c.what), *figures(c), _diff(c.difference_to_best),
                                        f"{c.cost_per_item:.4g} {c.cost_unit}", _cell(c.decision)]) + " |")  # fmt: skip
    for ref in [r for r in (result.ceiling, *result.baselines) if r is not None]:
        lines.append("| " + " | ".join([f"*{_cell(ref.name)}*", _cell(ref.what), *figures(ref), "", "",
                                        "reference: makes no call"]) + " |")  # fmt: skip
    blank = len(head) - 2
    for name, why in result.skipped.items():
        lines.append("| " + " | ".join([f"`{_cell(name)}`", *[""] * blank, _cell(why)]) + " |")
    return lines


def tuning_markdown(result: TuneResult) -> str:
    lines = [
        f"# Tuning {result.judge}",
        "",
        f"**Chosen: `{result.chosen}`.** {result.reason}.",
        "",
        f"Metric: {result.metric}, on {result.n_items} labelled dev items in {result.n_groups} groups, "
        f"{result.folds} folds by group (seed {result.seed}).",
        "",
        f"| figure | {_measure(result)} |",
        "|---|---|",
        f"| in-sample (chosen on these labels: optimistic) | {format_estimate(result.in_sample)} |",
        f"| out-of-fold (cross-fitted choice, scored on held folds) | {format_estimate(result.out_of_fold)} |",
        f"| optimism (in-sample minus out-of-fold) | "
        f"{'n/a' if result.optimism is None else f'{result.optimism:+.3f}'} |",
    ]
    if result.holdout is not None:
        forced = " (FORCED: this holdout had been tested before)" if result.holdout.forced else ""
        lines.append(f"| holdout (tested once){forced} | {format_estimate(_holdout_value(result))} |")
    else:
        lines.append("| holdout | not tested: `juge tune ... --test` runs the chosen judge once on holdout |")
    lines += [
        "",
        "Quote the out-of-fold (or holdout) figure, never the in-sample one.",
        "",
        "## Candidates",
        "",
        _ranking_note(result),
        "",
        *candidate_table(result),
    ]
    lines += [
        "",
        f"Choice made in each fold (from the other folds): {', '.join(str(c) for c in result.chosen_per_fold)}.",
        "",
        f"The tuned judge is `judge.toml` (template hash {result.tuned_template_hash}); its `[tuned]` table "
        "says where it came from.",
        "",
    ]
    return "\n".join(lines)


OUTPUTS = ("judge.toml", "TUNING.md", "tuning.json", "report.html")


@contextmanager
def staged_outputs(folder: Path) -> Iterator[dict[str, Path]]:
    """The files `juge tune` writes, staged in `folder` before the search (an unwritable --out fails before
    any call or holdout test) and moved into place together when the block ends without error."""
    with ExitStack() as stack:
        yield {name: stack.enter_context(staged(folder / name, "--out")) for name in OUTPUTS}


def write_outputs(staged_files: dict[str, Path], result: TuneResult, tuned: dict[str, Any]) -> None:
    contents = {
        "judge.toml": tomli_w.dumps(_toml_safe(tuned)),
        "TUNING.md": tuning_markdown(result),
        "tuning.json": json.dumps(result.to_dict(), indent=2, ensure_ascii=False) + "\n",
        "report.html": render_html(result.to_dict()),
    }
    for name, text in contents.items():
        staged_files[name].write_text(text, encoding="utf-8")


def _toml_safe(value: Any) -> Any:
    """TOML has no null: drop None values (a judge file leaves them out)."""
    if isinstance(value, dict):
        return {str(k): _toml_safe(v) for k, v in value.items() if v is not None}
    if isinstance(value, (list, tuple)):
        return [_toml_safe(v) for v in value if v is not None]
    return value
