"""Fixtures and parsers for the report tests.

`pairwise_calibration()` is a hand-made calibration result with the keys `juge calibrate
--json` writes (issue 3's Output section plus the study's extras). The parsers read the
numbers back out of the rendered HTML and Markdown so tests can compare them with it.
`judged_run()` stores a small run judged by the scripted provider, for the run and comparison reports.
"""

from __future__ import annotations

import asyncio
import copy
import re
from html.parser import HTMLParser
from typing import Any

from juge.data.records import Case
from juge.engine import Engine, EngineOptions, build_tasks
from juge.judges import judge_from_dict
from juge.providers import make_provider
from juge.store import Store

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'
CATEGORIES = {"writing": 0.5512, "math": 0.7134, "coding": 0.6203}


def est(value: float | None, low: float | None, high: float | None, n: int) -> dict[str, Any]:
    return {"value": value, "low": low, "high": high, "n": n}


def _judge(
    agree: float,
    kappa: float,
    flip: float | None,
    longer: float,
    counts: tuple[int, int, int, int, int],
    outcomes: tuple[int, int, int, int] | None,
    disagreements: list[dict[str, Any]] | None = None,
) -> dict[str, Any]:
    def cat(v: float, i: int) -> dict[str, Any]:
        return {
            "n_items": 20 + i,
            "vs_people": {
                "agreement": est(v, v - 0.1213, v + 0.0987, 50 + i),
                "kappa": est(v - 0.3, v - 0.5, v - 0.1, 50 + i),
            },
            "ceiling": {"agreement": est(0.7, 0.6, 0.8, 31), "kappa": est(0.5, 0.35, 0.65, 31)},
        }

    return {
        "n_items": 155,
        "verdict_counts": dict(zip(("A", "B", "tie", "inconsistent", "missing"), counts)),
        "outcomes": dict(zip(("ok", "refused", "unparsed", "error"), outcomes)) if outcomes else None,
        "vs_majority": {
            "agreement": est(agree + 0.0812, agree + 0.0134, agree + 0.1498, 122),
            "kappa": est(kappa + 0.1021, kappa + 0.0215, kappa + 0.1834, 122),
        },
        "vs_people": {
            "agreement": est(agree, agree - 0.0523, agree + 0.0491, 404),
            "kappa": est(kappa, kappa - 0.0712, kappa + 0.0688, 404),
        },
        "order_flip_rate": est(flip, flip - 0.0412, flip + 0.0467, 155) if flip is not None else None,
        "inconsistent_patterns": (
            {
                "n": counts[3],
                "shown_first_won_both": counts[3] // 2,
                "shown_second_won_both": counts[3] // 4,
                "tie_in_one_order": counts[3] - counts[3] // 2 - counts[3] // 4,
            }
            if flip is not None
            else None
        ),
        "picks_longer": est(longer, longer - 0.0611, longer + 0.0589, 101),
        "picks_longer_against_majority": est(0.3077, 0.0588, 0.5714, 13),
        "self_consistency": None,
        "per_category": {c: cat(v, i) for i, (c, v) in enumerate(CATEGORIES.items())},
        "disagreements": disagreements or [],
    }


def policy_routing(decisions: dict[str, str]) -> dict[str, Any]:
    """The smallest valid policy file (`juge policy derive --json`) deciding `decisions` ({category: judge|person})."""
    return {
        "kind": "juge-policy",
        "judge": "chat-strong/pair-v2",
        "rule": "margin",
        "margin": 0.05,
        "policy_hash": "cc67",
        "categories": {c: {"decision": d, "reason": f"{d} decides"} for c, d in decisions.items()},
    }


def _disagreement(item_id: str, verdict: str, votes: dict[str, int], text: str = "reasoning") -> dict[str, Any]:
    return {
        "item_id": item_id,
        "category": "writing",
        "majority": max(votes, key=votes.get),
        "verdict": verdict,
        "votes": votes,
        "letters": {"12": "A", "21": "B"},
        "texts": {"12": f"order 12: {text} [[A]]", "21": f"order 21: {text} [[B]]"},
    }


def pairwise_calibration() -> dict[str, Any]:
    """A dev-split calibration: two judges with one template each, and two baselines."""
    small_disagreements = [
        _disagreement("item-half", "A", {"A": 1, "B": 1, "tie": 0}),
        _disagreement("item-all", "A", {"A": 0, "B": 3, "tie": 0}),
        _disagreement("item-two-thirds", "inconsistent", {"A": 1, "B": 2, "tie": 0}),
        _disagreement("item-all-small", "B", {"A": 2, "B": 0, "tie": 0}),
    ]
    return copy.deepcopy(
        {
            "kind": "pairwise",
            "split": "dev",
            "n_items": 155,
            "n_votes": 404,
            "n_raters": 65,
            "ceiling": {
                "agreement": est(0.6382, 0.5691, 0.7128, 376),
                "kappa": est(0.4517, 0.3401, 0.5588, 376),
                "agreement_without_ties": est(0.8341, 0.7653, 0.8974, 229),
                "n_pairs": 376,
            },
            "n_without_majority": 33,
            "majority_picks_longer": est(0.7553, 0.6702, 0.8391, 94),
            "per_category": {
                c: {
                    "n_items": 18 + i,
                    "n_votes": 50 + i,
                    "n_raters": 30,
                    "ceiling": {
                        "agreement": est(0.5625 + i / 10, 0.3824 + i / 10, 0.7292 + i / 10, 48 + i),
                        "kappa": est(0.345, 0.063, 0.564, 48 + i),
                        "agreement_without_ties": est(0.92, 0.75, 1.0, 25),
                        "n_pairs": 48 + i,
                    },
                    "n_without_majority": 4,
                    "majority_picks_longer": est(1.0, 1.0, 1.0, 10),
                }
                for i, c in enumerate(CATEGORIES)
            },
            "judges": {
                "chat-small/pair-v2": _judge(
                    0.6386, 0.4358, 0.0774, 0.6308, (65, 67, 11, 12, 4), (302, 2, 3, 1), small_disagreements
                ),
                "chat-strong/pair-v2": _judge(0.6460, 0.4477, 0.0516, 0.6406, (62, 68, 17, 8, 0), (310, 0, 0, 0)),
                "gpt4_2023": _judge(0.6510, 0.4693, 0.1742, 0.7642, (49, 59, 20, 27, 0), None),
                "longer answer": _judge(0.5569, 0.2921, None, 1.0, (60, 89, 6, 0, 0), None),
            },
            "reference": [
                {
                    "with_reference": "chat-small/pair-math-v1",
                    "without_reference": "chat-small/pair-v2",
                    "n_items": 58,
                    "vs_people_with": est(0.6575, 0.5655, 0.7516, 146),
                    "vs_people_without": est(0.6438, 0.5613, 0.75, 146),
                    "difference": est(0.0137, -0.0612, 0.0559, 146),
                }
            ],
            "bootstrap": {"n_resamples": 2000, "seed": 0, "level": 0.95, "unit": "item"},
            "versions": {
                "juge": "0.1.0",
                "sources_sha256": {"items.jsonl": "3f5a9c0e1b2d4e6f", "judgments.jsonl": "9e8d7c6b5a4f3e2d"},
                "judges": {
                    "chat-small/pair-v2": {
                        "judge": "chat-small",
                        "template": "pair-v2",
                        "models": ["gpt-6-luna-2026-09-22"],
                        "template_hashes": ["a1b2c3d4"],
                        "baseline": False,
                    },
                    "chat-strong/pair-v2": {
                        "judge": "chat-strong",
                        "template": "pair-v2",
                        "models": ["gpt-6.1-sol-2026-09-29"],
                        "template_hashes": [],
                        "baseline": False,
                    },
                    "gpt4_2023": {
                        "judge": "gpt4_2023",
                        "template": None,
                        "models": [],
                        "template_hashes": [],
                        "baseline": True,
                    },
                    "longer answer": {
                        "judge": "longer answer",
                        "template": None,
                        "models": [],
                        "template_hashes": [],
                        "baseline": True,
                    },
                },
            },
            "notes": ["The ceiling is person vs person; compare it with 'vs_people', never with 'vs_majority'."],
        }
    )


class TableParser(HTMLParser):
    """Collects every <table> with an id (and every table's rows) as lists of cell texts."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.tables: dict[str, list[list[str]]] = {}
        self.tags: list[str] = []
        self.attributes: list[tuple[str, str, str | None]] = []
        self._table: str | None = None
        self._row: list[str] | None = None
        self._cell: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append(tag)
        self.attributes.extend((tag, name, value) for name, value in attrs)
        if tag == "table":
            self._table = dict(attrs).get("id") or f"table-{len(self.tables)}"
            self.tables[self._table] = []
        elif tag == "tr" and self._table:
            self._row = []
        elif tag in ("td", "th") and self._row is not None:
            self._cell = []

    def handle_endtag(self, tag: str) -> None:
        if tag in ("td", "th") and self._cell is not None and self._row is not None:
            self._row.append(" ".join("".join(self._cell).split()))
            self._cell = None
        elif tag == "tr" and self._row is not None and self._table:
            self.tables[self._table].append(self._row)
            self._row = None
        elif tag == "table":
            self._table = None

    def handle_data(self, data: str) -> None:
        if self._cell is not None:
            self._cell.append(data)


def parse_html(text: str) -> TableParser:
    parser = TableParser()
    parser.feed(text)
    parser.close()
    return parser


def md_tables(text: str) -> list[list[list[str]]]:
    """Markdown tables as lists of rows of unescaped cell texts (header and separator dropped)."""
    tables, current = [], []
    for line in text.splitlines():
        if line.startswith("|"):
            current.append(line)
        elif current:
            tables.append(current)
            current = []
    if current:
        tables.append(current)
    out = []
    for rows in tables:
        parsed = []
        for row in rows[2:]:
            cells = re.split(r"(?<!\\)\|", row.strip())[1:-1]
            parsed.append([re.sub(r"\\(.)", r"\1", c).strip() for c in cells])
        out.append(parsed)
    return out


# juge.results.format_estimate's form: "71.2 % [65.0, 77.0] n=155", "0.45 [0.34, 0.56] n=40".
RATE = re.compile(r"^(-?\d+\.\d) % \[(-?\d+\.\d), (-?\d+\.\d)\] n=(\d+)$")
COEF = re.compile(r"^(-?\d+\.\d\d) \[(-?\d+\.\d\d), (-?\d+\.\d\d)\] n=(\d+)$")
NOT_AVAILABLE = re.compile(r"^n/a( n=\d+)?$")


def parse_estimate(cell: str) -> dict[str, float] | None:
    """Read back a rate or a coefficient as format_estimate prints it; None for 'n/a' (with or without its n)."""
    if NOT_AVAILABLE.match(cell):
        return None
    for pattern, scale in ((RATE, 100.0), (COEF, 1.0)):
        m = pattern.match(cell)
        if m:
            value, low, high = (float(g) / scale for g in m.groups()[:3])
            return {"value": value, "low": low, "high": high, "n": int(m.group(4)), "scale": scale}
    raise AssertionError(f"cell is not an estimate: {cell!r}")


def assert_same_estimate(cell: str, expected: dict[str, Any] | None) -> None:
    """The cell shows exactly the expected estimate, to the precision it prints."""
    got = parse_estimate(cell)
    if expected is None or expected.get("value") is None:
        assert got is None, f"{cell!r} should be 'n/a'"
        return
    assert got is not None, f"expected {expected}, the report says not available"
    half_step = 0.0005 if got["scale"] == 100.0 else 0.005  # half the printed precision
    for key in ("value", "low", "high"):
        assert abs(got[key] - expected[key]) <= half_step + 1e-9, (key, cell, expected)
    assert got["n"] == expected["n"], (cell, expected)


def judged_run(
    store: Store,
    outputs: list[str],
    script: list[dict[str, str]],
    *,
    model: str = "m1",
    run_id: str,
    failed_check: frozenset[str] = frozenset(),
) -> str:
    """A run of one PASS/FAIL judge (scripted answers) over cases c0..; `failed_check` ids fail a check."""
    cases = [
        Case(id=f"c{i}", question=f"Question {i}: {HOSTILE}", output=o, category="cat") for i, o in enumerate(outputs)
    ]
    judge = judge_from_dict({"name": "pf", "setup": "passfail", "description": "Is it polite?", "model": model})
    provider = make_provider("scripted", default="PASS\nPolite enough.", responses=script, model=model)
    store.create_run(
        dataset_hash="d" * 64,
        juge_version="test",
        cases=cases,
        run_id=run_id,
        config={"judges": [{"name": "pf", "setup": "passfail"}]},
    )
    for case in cases:
        store.save_checks(run_id, case.id, {"not_empty": (case.id not in failed_check, "empty <b>x</b>")})
    engine = Engine(store, EngineOptions(progress=False, backoff=0.001))
    asyncio.run(engine.run_tasks(run_id, build_tasks(cases, [judge]), {"pf": provider}))
    return run_id
