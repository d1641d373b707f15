"""How far a stored run has got: judgments stored over judgments it needs (for `juge runs`)."""

from __future__ import annotations

from typing import Any

from juge.store import Store


def run_done_total(store: Store, run: dict[str, Any]) -> tuple[int, int | None]:
    """(judgments stored, judgments the run needs); the total is None when the run's config does not
    name its judges' setups (runs written by other commands)."""
    done = len(store.done_keys(run["id"]))
    config = run.get("config") or {}
    judges = config.get("judges") or []
    if not judges or any(not isinstance(j, dict) or not j.get("setup") for j in judges):
        return done, None
    repeat = int(config.get("repeat") or 1)
    cases = store.run_cases(run["id"])
    pairs = sum(1 for c in cases if c.is_pair)
    singles = len(cases) - pairs
    total = 0
    for j in judges:
        total += 2 * pairs if j["setup"] == "pairwise" else singles
    return done, total * repeat
