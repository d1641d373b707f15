"""Rich tables of a calibration result (the dict written as calibration.json).

Rendering only: every number shown is read from the result, nothing is computed here.
Dataset and model text is printed with markup disabled (it is untrusted).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from juge.calibration.pairwise import VERDICTS
from juge.data.records import OUTCOMES
from juge.reports.fit import fitted, joined, wrapped
from juge.stats.estimate import format_estimate

DECIDING_DIGITS = 3  # figures a decision compares (the headline's margin rule) are shown as compared


def fmt(est: dict[str, Any] | None, digits: int = 2, *, with_n: bool = True) -> str:
    """``0.64 [0.57, 0.70] n=404`` (:func:`juge.stats.estimate.format_estimate` with the tables' two digits)."""
    return format_estimate(est, digits, with_n=with_n)


def _table(title: str, *columns: str, caption: str | None = None) -> Table:
    """A table whose title, caption and headers are plain text (headers may be judge names or labels)."""
    table = Table(
        title=Text(title),
        caption=None if caption is None else Text(caption),
        title_justify="left",
        caption_justify="left",
        show_lines=False,
    )
    for k, col in enumerate(columns):
        table.add_column(Text(col), justify="left" if k == 0 else "right", overflow="fold")
    return table


def _whole_headers(table: Table, first: int) -> None:
    """Columns from `first` on are headed by judge names: a header may wrap, but never inside a name."""
    for column in table.columns[first:]:
        column.min_width = cell_len(str(column.header))


def _prose(console: Console, text: str) -> Text:
    """A sentence for `console`: plain text, wrapped between words, every figure whole on one line."""
    return wrapped(text, console)


def _cell(text: str) -> Text:
    return Text(text)  # never interpreted as markup


def print_header(result: dict[str, Any], console: Console) -> None:
    boot = result.get("bootstrap", {})
    console.print(
        _prose(
            console,
            f"Split {result['split']}: {result['n_items']} items, {result['n_votes']} human votes from "
            f"{result['n_raters']} people. Intervals: 95 % percentile bootstrap over items, "
            f"{boot.get('n_resamples')} resamples, seed {boot.get('seed')}.",
        )
    )


def print_pairwise(result: dict[str, Any], console: Console) -> None:
    """All tables of a pairwise study."""
    print_header(result, console)
    ceiling = result["ceiling"]
    if not _gold(result, console):
        table = _table("Ceiling: person vs person (every pair of raters on an item, pooled)", "figure", "value")
        table.add_row("agreement", fmt(ceiling["agreement"]))
        table.add_row("Cohen's kappa", fmt(ceiling["kappa"]))
        if "krippendorff_alpha" in ceiling:
            table.add_row("Krippendorff's alpha (nominal)", fmt(ceiling["krippendorff_alpha"]))
        table.add_row("agreement without ties", fmt(ceiling["agreement_without_ties"]))
        table.add_row("human majority picks the longer answer", fmt(result.get("majority_picks_longer")))
        console.print(fitted(table, console))
        console.print(
            _prose(
                console,
                f"{result['n_without_majority']} of {result['n_items']} items have no majority "
                "(a tie for the top) and are left out of the 'vs majority' columns.",
            )
        )

    judges = result["judges"]
    table = _table(
        "Judges against people",
        "judge",
        "items",
        "vs people: agreement",
        "vs people: kappa",
        "vs majority: agreement",
        "vs majority: kappa",
    )
    for key, j in judges.items():
        table.add_row(
            _cell(key),
            str(j["n_items"]),
            fmt(j["vs_people"]["agreement"]),
            fmt(j["vs_people"]["kappa"]),
            fmt(j["vs_majority"]["agreement"]),
            fmt(j["vs_majority"]["kappa"]),
        )
    console.print(fitted(table, console))
    console.print(
        _prose(
            console,
            f"Compare 'vs people' with the ceiling (agreement {fmt(ceiling['agreement'], with_n=False)}, "
            f"kappa {fmt(ceiling['kappa'], with_n=False)}). 'vs majority' is not comparable with the "
            "ceiling: a majority label is less noisy than one person.",
        )
    )

    table = _table(
        "Verdicts (both orders combined; inconsistent counts as tie, missing is excluded)", "judge", *VERDICTS
    )
    for key, j in judges.items():
        table.add_row(_cell(key), *(str(j["verdict_counts"][v]) for v in VERDICTS))
    console.print(fitted(table, console))
    called = {key: j["outcomes"] for key, j in judges.items() if j.get("outcomes")}
    if called:
        table = _table("Calls by outcome (every order and repeat)", "judge", *OUTCOMES)
        for key, outcomes in called.items():
            table.add_row(_cell(key), *(str(outcomes[o]) for o in OUTCOMES))
        console.print(fitted(table, console))

    table = _table(
        "Order and length bias",
        "judge",
        "order flip rate",
        "inconsistent: first / second shown won both",
        "picks longer",
        "picks longer when contradicting the majority",
        caption="Order flip rate: share of verdicts whose two orders disagree. Picks longer: share of decisive "
        "verdicts (A or B) on answers of unequal length that chose the longer one.",
    )
    for key, j in judges.items():
        pattern = j.get("inconsistent_patterns")
        pattern_text = (
            f"{pattern['shown_first_won_both']} / {pattern['shown_second_won_both']} of {pattern['n']}"
            if pattern
            else "n/a"
        )
        table.add_row(
            _cell(key),
            fmt(j.get("order_flip_rate")),
            pattern_text,
            fmt(j["picks_longer"]),
            fmt(j["picks_longer_against_majority"]),
        )
    console.print(fitted(table, console))

    repeated = {k: j["self_consistency"] for k, j in judges.items() if j.get("self_consistency")}
    if repeated:
        table = _table("Self-consistency (asked again in the same order)", "judge", "verdict changed")
        for key, est in repeated.items():
            table.add_row(_cell(key), fmt(est))
        console.print(fitted(table, console))

    print_per_category(result, console)

    if result.get("reference"):
        table = _table(
            "Reference answer: same judge with and without it, same items (vs people agreement)",
            "with reference",
            "without",
            "items",
            "with",
            "without ",
            "difference (paired)",
        )
        for r in result["reference"]:
            table.add_row(
                _cell(r["with_reference"]),
                _cell(r["without_reference"]),
                str(r["n_items"]),
                fmt(r["vs_people_with"]),
                fmt(r["vs_people_without"]),
                fmt(r["difference"]),
            )
        console.print(fitted(table, console))

    if result.get("differences"):
        table = _table(
            "Judges with the same template, same items (vs people agreement)",
            "judge A",
            "judge B",
            "items",
            "A",
            "B",
            "A - B (paired)",
        )
        for d in result["differences"]:
            table.add_row(
                _cell(d["a"]),
                _cell(d["b"]),
                str(d["n_items"]),
                fmt(d["vs_people_a"]),
                fmt(d["vs_people_b"]),
                fmt(d["difference"]),
            )
        console.print(fitted(table, console))


def confusion_text(confusion: dict[str, Any]) -> str:
    """A confusion matrix as words, a line per people's label: 'people FAIL: judge PASS 15, FAIL 7'."""
    labels = confusion["labels"]
    return "; ".join(
        f"people {label}: judge " + ", ".join(f"{verdict} {n}" for verdict, n in zip(labels, row, strict=True))
        for label, row in zip(labels, confusion["matrix"], strict=True)
    )


def print_grades_per_category(result: dict[str, Any], console: Console) -> None:
    """A PASS/FAIL study per category, as the JSON has it: each judge's agreement and kappa with people,
    the failures it caught and its false flags (a category's ceiling where the study measured one)."""
    ceilings = result.get("per_category") or {}
    rows = [
        (key, category, cat)
        for key, j in result["judges"].items()
        for category, cat in (j.get("per_category") or {}).items()
    ]
    if not rows:
        return
    with_ceiling = any((c or {}).get("ceiling") for c in ceilings.values())
    table = _table(
        "Per category: the judge against people", "judge", "category", *(["ceiling"] if with_ceiling else []),
        "agreement", "kappa", "failures caught", "false flags",
    )  # fmt: skip
    for key, category, cat in rows:
        ceiling = (ceilings.get(category) or {}).get("ceiling") or {}
        caught, flags = cat.get("failures_caught"), cat.get("false_flags")
        table.add_row(
            _cell(key),
            _cell(category),
            *([fmt(ceiling.get("agreement")) if ceiling else "-"] if with_ceiling else []),
            fmt(cat.get("agreement")),
            fmt(cat.get("kappa")),
            f"{caught['k']} of {caught['n']}" if caught else "n/a",
            f"{flags['k']} of {flags['n']}" if flags else "n/a",
        )
    console.print(fitted(table, console))


def print_per_category(result: dict[str, Any], console: Console) -> None:
    """Per category: the ceiling and each judge's agreement with people (value, interval, n), to 3 decimals:
    the headline decides on these figures as printed (3 decimals), so the table shows what it compared."""
    judges = result["judges"]
    table = _table("Per category: agreement with people (ceiling = person vs person)", "category", "ceiling", *judges)
    _whole_headers(table, 2)
    for category, people in result.get("per_category", {}).items():
        cells = [fmt(people["ceiling"]["agreement"], DECIDING_DIGITS)]
        for j in judges.values():
            cat = j["per_category"].get(category)
            if cat is None:
                cells.append("-")
                continue
            missing = cat["verdict_counts"]["missing"]
            cells.append(
                fmt(cat["vs_people"]["agreement"], DECIDING_DIGITS) + (f"\n({missing} missing)" if missing else "")
            )
        table.add_row(_cell(category), *cells)
    console.print(fitted(table, console))


GOLD_CEILING = (
    "Ceiling: not measurable. Every item holds one label (gold labels), so no person-vs-person figure exists; "
    "the judges are measured against the gold labels below."
)


def _gold(result: dict[str, Any], console: Console) -> bool:
    """For a study on gold labels, say once why there is no ceiling table; True when it is one."""
    if (result.get("truth") or {}).get("mode") != "gold":
        return False
    console.print(_prose(console, GOLD_CEILING))
    return True


TRUTH_WORDS = {
    "gold": "the judge against the gold labels, one per item",
    "each": "the judge against each person's label, pooled, as person vs person is measured",
    "mean": "the judge against the mean of the people's scores",
    "agree": "the judge against the label of the people who agree (only items where they all do)",
}


def print_grades(result: dict[str, Any], console: Console) -> None:
    """Tables of a single-score or PASS/FAIL study."""
    print_header(result, console)
    truth = result["truth"]
    console.print(_prose(console, f"Judge vs person: {TRUTH_WORDS.get(truth['mode'], truth['mode'])} "
                                  f"({truth['n_items']} items)."))  # fmt: skip
    score = result["kind"] == "score"
    stats = (
        [
            "agreement",
            "kappa",
            "weighted_kappa",
            "pearson",
            "spearman",
            "krippendorff_alpha",
            "krippendorff_alpha_interval",
        ]
        if score
        else ["agreement", "kappa", "krippendorff_alpha"]
    )
    if not _gold(result, console):
        table = _table("Ceiling: person vs person", "figure", "value")
        for name in stats:
            if name in result["ceiling"]:
                table.add_row(ALPHA_NAMES.get(name, name.replace("_", " ")), fmt(result["ceiling"].get(name)))
        if result["ceiling"].get("at_threshold"):
            at = result["ceiling"]["at_threshold"]
            table.add_row(f"agreement at >= {at['threshold']:g}", fmt(at["agreement"]))
        console.print(fitted(table, console))
    if not result["judges"]:
        left_out = any("left out of this" in note for note in result.get("notes", []))
        console.print(
            _prose(
                console,
                "No judge is of this study's kind (the notes name those left out): only the person-vs-person "
                "figures above. --kind sets the kind."
                if left_out
                else "No judgments given: only the person-vs-person figures above. Add --judgments FILE or "
                "--run RUN_ID to measure a judge against them.",
            )
        )
        return
    table = _table(
        "Judges against people",
        "judge",
        *(s.replace("_", " ") for s in stats),
        caption="Krippendorff's alpha: the raters with the judge added as one more rater.",
    )
    for key, j in result["judges"].items():
        table.add_row(_cell(key), *(fmt(j.get(s)) for s in stats))
    console.print(fitted(table, console))
    if score and any(j.get("at_threshold") for j in result["judges"].values()):
        table = _table("Binary verdict at the threshold", "judge", "threshold", "agreement", "kappa")
        for key, j in result["judges"].items():
            if j.get("at_threshold"):
                at = j["at_threshold"]
                table.add_row(_cell(key), f">= {at['threshold']:g}", fmt(at["agreement"]), fmt(at["kappa"]))
        console.print(fitted(table, console))
    if not score:
        table = _table(
            "Failures and false flags",
            "judge",
            "failures caught",
            "false flags",
            "the judge's verdicts by the people's label",
        )
        for key, j in result["judges"].items():
            caught = j.get("failures_caught")
            caught_text = (
                f"caught {caught['k']} of {caught['n']} ({fmt(caught['rate'], with_n=False)})"
                if caught
                else "n/a: no human FAIL"
            )
            flags = j["false_flags"]
            table.add_row(
                _cell(key),
                caught_text,
                f"{flags['k']} of {flags['n']} ({fmt(flags['rate'], with_n=False)})",
                confusion_text(j["confusion"]),
            )
        console.print(fitted(table, console))
        print_grades_per_category(result, console)
    verdict_names = list(next(iter(result["judges"].values()))["verdict_counts"]) if result["judges"] else []
    table = _table("Verdicts and calls by outcome", "judge", *verdict_names, *OUTCOMES)
    for key, j in result["judges"].items():
        outcomes = j.get("outcomes") or {}
        table.add_row(
            _cell(key),
            *(str(j["verdict_counts"][v]) for v in verdict_names),
            *(str(outcomes.get(o, "-")) for o in OUTCOMES),
        )
    console.print(fitted(table, console))


ALPHA_NAMES = {
    "krippendorff_alpha": "krippendorff alpha",
    "krippendorff_alpha_interval": "krippendorff alpha (interval)",
}
COUNT_NAMES = {
    "items_read": "items read",
    "items_without_label": "items without a human label (left out)",
    "label_values_read": "label values read",
    "missing_values": "missing label values (left out)",
    "labels_unknown_item": "labels on an unknown item (left out)",
    "duplicate_votes": "duplicate votes (counted once)",
}


def print_counts(counts: dict[str, int] | None, console: Console) -> None:
    """Every item and label value accounted for, one line each."""
    if not counts:
        return
    parts = [f"{COUNT_NAMES.get(k, k)}: {v}" for k, v in counts.items()]
    for line in joined(["Input:", *parts] if not parts else [f"Input: {parts[0]}", *parts[1:]], console.width):
        console.print(_cell(line))


def print_side_by_side(result: dict[str, Any], console: Console) -> None:
    """One row per criterion: the people's ceiling and each judge's agreement with each person."""
    rows = result["side_by_side"]
    keys = list(dict.fromkeys(k for row in rows for k in row["judges"]))
    table = _table(
        "Criteria side by side (agreement with each person; ceiling: person vs person)",
        "criterion",
        "n items",
        "ceiling agreement",
        "ceiling kappa",
        "ceiling alpha",
        *(f"{k} agreement" for k in keys),
    )
    for column, key in zip(table.columns[5:], keys, strict=True):
        column.min_width = cell_len(key)
    for row in rows:
        ceiling = row["ceiling"]
        table.add_row(
            _cell(row["criterion"]),
            str(row["n_items"]),
            fmt(ceiling.get("agreement")),
            fmt(ceiling.get("kappa")),
            fmt(ceiling.get("krippendorff_alpha")),
            *(fmt(row["judges"].get(k, {}).get("agreement")) for k in keys),
        )
    console.print(fitted(table, console))


def print_headlines(lines: Sequence[dict[str, Any]], console: Console) -> None:
    for h in lines:
        style = "bold green" if h["stands_in"] else "bold red" if h["not_in"] else "bold yellow"
        console.print(_prose(console, h["sentence"]), style=style)
    if lines:
        console.print(_cell("The detail follows: every figure with its 95 % interval and n."), style="dim")


def print_result(result: dict[str, Any], console: Console, warnings: Sequence[str] = ()) -> None:
    """The one-line answer per judge first (a criteria study: per criterion), then every table of a
    study, then its notes; the notes that are `warnings` stand out as such."""
    from juge.reports.headline import trivial_baseline_lines
    from juge.reports.model import calibration_headlines

    print_headlines(calibration_headlines(result), console)
    for line in trivial_baseline_lines(result):
        console.print(_prose(console, line), style="bold yellow")
    if result["kind"] == "criteria":
        for name, study in result["criteria"].items():
            console.print(_cell(f"\n== criterion {name} =="), style="bold")
            print_result({**study, "notes": []}, console)
        console.print()
        print_side_by_side(result, console)
    elif result["kind"] == "pairwise":
        print_pairwise(result, console)
    else:
        print_grades(result, console)
    print_counts(result.get("counts"), console)
    for note in result.get("notes", []):
        if note in warnings:
            console.print(_prose(console, f"warning: {note}"), style="yellow")
        else:
            console.print(_prose(console, f"note: {note}"), style="dim")
