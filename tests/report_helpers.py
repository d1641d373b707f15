"""Hand-made calibration results for the report tests (keys as in issue 3's Output section)."""

from __future__ import annotations

import copy
from typing import Any

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def est(value: float, low: float, high: float, n: int) -> dict[str, Any]:
    return {"value": value, "low": low, "high": high, "n": n}


def _judge(agree: float, kappa: float, flip: float | None, longer: float, cats: dict[str, float],
           counts: tuple[int, int, int, int, int], outcomes: tuple[int, int, int, int] | None) -> dict[str, Any]:
    entry: dict[str, Any] = {
        "verdict_counts": dict(zip(("A", "B", "tie", "inconsistent", "missing"), counts)),
        "vs_majority": {"agreement": est(agree + 0.08, agree + 0.01, agree + 0.15, 122),
                        "kappa": est(kappa + 0.1, kappa + 0.02, kappa + 0.18, 122)},
        "vs_people": {"agreement": est(agree, agree - 0.05, agree + 0.05, 412),
                      "kappa": est(kappa, kappa - 0.07, kappa + 0.07, 412)},
        "picks_longer": est(longer, longer - 0.06, longer + 0.06, 101),
        "per_category": {
            cat: {"vs_people": {"agreement": est(v, v - 0.12, v + 0.1, 52), "kappa": est(v - 0.3, v - 0.5, v - 0.1, 52)},
                  "ceiling": {"agreement": est(0.7, 0.6, 0.8, 31), "kappa": est(0.5, 0.35, 0.65, 31)}}
            for cat, v in cats.items()
        },
    }
    if flip is not None:
        entry["order_flip_rate"] = est(flip, flip - 0.04, flip + 0.05, 155)
    if outcomes is not None:
        entry["outcomes"] = dict(zip(("ok", "refused", "unparsed", "error"), outcomes))
    return entry


def pairwise_calibration() -> dict[str, Any]:
    """A dev-split calibration with two judges, one template each, and two baselines."""
    cats = {"writing": 0.55, "math": 0.71, "coding": 0.62}
    return copy.deepcopy({
        "split": "dev",
        "n_items": 155,
        "n_votes": 412,
        "n_raters": 57,
        "n_without_majority": 33,
        "ceiling": {"agreement": est(0.6312, 0.5811, 0.6803, 329), "kappa": est(0.4123, 0.3411, 0.4802, 329),
                    "agreement_without_ties": est(0.8421, 0.7953, 0.8844, 231), "n_pairs": 329},
        "people_picks_longer": est(0.6105, 0.5531, 0.6642, 288),
        "versions": {
            "juge": "0.1.0",
            "dataset_hash": "sha256:3f5a9c0e1b2d",
            "models": {"chat-small": "gpt-6-luna-2026-09-22", "chat-strong": "gpt-6.1-sol-2026-09-29"},
            "templates": {"pair-v2": "a1b2c3d4e5f6"},
        },
        "judges": {
            "chat-small/pair-v2": _judge(0.5834, 0.3472, 0.1871, 0.7012, cats, (61, 52, 9, 29, 4), (302, 2, 3, 1)),
            "chat-strong/pair-v2": _judge(0.6247, 0.4018, 0.0968, 0.6533, cats, (64, 58, 14, 15, 4), (308, 0, 0, 0)),
            "longer answer": _judge(0.5121, 0.2214, None, 1.0, cats, (80, 70, 5, 0, 0), None),
            "gpt4_2023": _judge(0.6035, 0.3711, 0.1452, 0.6622, cats, (58, 55, 20, 22, 0), None),
        },
    })


def disagreement_example(text: str = HOSTILE) -> dict[str, Any]:
    """One disagreement card whose every dataset/model text is `text`."""
    return {
        "item_id": "mtb-q1-" + text,
        "category": "writing",
        "judge": "chat-small/pair-v2",
        "verdict": "A",
        "disagreement": 1.0,
        "question": "Q " + text,
        "answer_1": "A1 " + text,
        "answer_2": "A2 " + text,
        "votes": [{"rater_id": "expert_" + text, "label": "B"}, {"rater_id": "author_2", "label": "B"}],
        "judge_texts": [
            {"order": "12", "letter": "A", "outcome": "ok", "text": "order 12 " + text + " [[A]]"},
            {"order": "21", "letter": "B", "outcome": "ok", "text": "order 21 " + text + " [[B]]"},
        ],
    }
