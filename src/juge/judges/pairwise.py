"""Pairwise verdicts from both orders.

In order ``"12"`` answer 1 is shown as Assistant A; in order ``"21"`` answer 2 is
shown as Assistant A. A letter is mapped back to the fixed order before the two
orders are compared: ``A`` in order 21 means answer 2, i.e. fixed ``B``. ``C`` is
a tie. The same result in both orders is the verdict; two different results are
``inconsistent`` (counted as a tie in agreement figures and sent to a person).
If either order has no letter (refused, unparsed, error, missing) the verdict is
missing (``None``).
"""

from __future__ import annotations

from typing import Literal

PairVerdict = Literal["A", "B", "tie", "inconsistent"]

_FIXED = {
    "12": {"A": "A", "B": "B", "C": "tie"},
    "21": {"A": "B", "B": "A", "C": "tie"},
}


def to_fixed_order(letter: str | None, order: str) -> str | None:
    """Map a letter the judge wrote in `order` to the fixed order: 'A', 'B', 'tie' or None."""
    if letter is None:
        return None
    try:
        return _FIXED[order][letter]
    except KeyError:
        raise ValueError(f"unknown order {order!r} or letter {letter!r}") from None


def letter_meaning(letter: str | None, order: str) -> str | None:
    """What a letter written in `order` says in the fixed order ('answer 2 better' for A in order 21), so
    a reader need not map letters back; None for no letter or one outside the setup's."""
    fixed = _FIXED.get(order, {}).get(letter or "")
    return {"A": "answer 1 better", "B": "answer 2 better", "tie": "a tie"}.get(fixed or "")


def combine_orders(letter_12: str | None, letter_21: str | None) -> PairVerdict | None:
    """Combine the letters written in orders 12 and 21 into one verdict in the fixed order."""
    first = to_fixed_order(letter_12, "12")
    second = to_fixed_order(letter_21, "21")
    if first is None or second is None:
        return None
    return first if first == second else "inconsistent"  # type: ignore[return-value]


def as_agreement_label(verdict: PairVerdict | None) -> str | None:
    """The label used in agreement figures: `inconsistent` counts as `tie`."""
    if verdict == "inconsistent":
        return "tie"
    return verdict
