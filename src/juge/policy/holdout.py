"""Test a judge policy once on the holdout split, and record that the holdout was used.

The store's ``holdout_uses`` table records every test with its data hash (items and
human labels) and, in ``holdout_use_items``, its item ids and groups. A test whose
data hash, or any item id or group, was in an earlier test (with any policy) is
refused unless forced: a subset, a relabelled copy or a renamed split is the same
holdout. A forced test is flagged in its result and in every later one
(``previous_uses``).

Figures on the holdout (all with a clustered bootstrap interval over items):
the decisions and the share the judge decides alone; on the items the judge decides,
agreement and kappa with the majority, judge vs each person, and person vs person on
the same items; the same judge (the policy's template per category) on every holdout
item with no policy; and all of it per category.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any

from juge.calibration.pairtable import PairItem
from juge.calibration.pairwise import Bootstrap, ceiling, vs_majority, vs_people
from juge.errors import InputError
from juge.policy.derivation import PairStudyData, no_split_error, split_hash
from juge.policy.guarantee import check_on_holdout
from juge.policy.route import JUDGE, RouteDecision, route_item
from juge.stats import ratio_estimate
from juge.store import Store

POLICY_KEY = "policy"


class HoldoutAlreadyUsed(InputError):
    """The holdout was tested before; a second test needs --force."""


def _figures(items: Sequence[PairItem], decided: set[str], boot: Bootstrap) -> dict[str, Any]:
    judged = [it for it in items if it.item_id in decided]
    return {
        "n_items": len(items),
        "judge_decides": ratio_estimate(
            [it.item_id in decided for it in items], [1] * len(items), **boot.kwargs
        ).to_dict(),
        "on_judged_items": {
            "vs_majority": vs_majority(judged, POLICY_KEY, boot),
            "vs_people": vs_people(judged, POLICY_KEY, boot),
            "ceiling": ceiling(judged, boot)["agreement"],
            "n_without_majority": sum(it.majority is None for it in judged),
        },
        "no_policy": {
            "vs_majority": vs_majority(items, POLICY_KEY, boot),
            "vs_people": vs_people(items, POLICY_KEY, boot),
            "ceiling": ceiling(items, boot)["agreement"],
        },
    }


def run_holdout_test(
    policy: dict[str, Any],
    data: PairStudyData,
    store: Store,
    *,
    split: str = "holdout",
    force: bool = False,
    boot: Bootstrap = Bootstrap(),
    before_recording: Callable[[dict[str, Any]], None] | None = None,
) -> dict[str, Any]:
    """Apply the policy to the holdout split, once; record the use in the store and return the result.

    ``before_recording(result)`` runs inside the transaction that records the use (e.g. writing the output
    to a temporary file): if it raises, nothing is recorded and the holdout is not used up.
    """
    table = data.table().split(split)
    items = table.items
    if not items:
        raise no_split_error(split, data.cases)
    ids = {it.item_id for it in items}
    data_hash = split_hash([c for c in data.cases if c.id in ids], data.labels)
    derived_on = policy["dev"].get("split", "dev")
    if data_hash == policy["dev"]["data_hash"]:
        raise InputError(
            f"the policy was derived on these very items (split {derived_on!r}); testing it on them "
            "measures nothing. Test it on items it has not seen: --split NAME of another split"
        )
    overlap = sorted({it.group for it in items} & set(policy["dev"]["groups"]))
    if overlap:
        raise InputError(
            f"{len(overlap)} groups of split {split!r} are also in split {derived_on!r} the policy was "
            f"derived on (e.g. {overlap[0]!r}): the test items must not share groups with them"
        )
    _previous_uses(store, data_hash, items, force)  # refuse early, before the figures

    by_item: dict[str, list] = {}
    for j in data.judgments:
        if j.item_id in ids:
            by_item.setdefault(j.item_id, []).append(j)
    decisions: list[RouteDecision] = [
        route_item(policy, it.item_id, it.category, by_item.get(it.item_id, [])) for it in items
    ]
    for it, d in zip(items, decisions):
        if d.template and d.template in it.judges:
            it.judges[POLICY_KEY] = it.judges[d.template]
    decided = {d.item_id for d in decisions if d.route == JUDGE}
    counts = Counter(d.label for d in decisions)
    categories = sorted({it.category for it in items})
    figures = {
        "decisions": dict(sorted(counts.items())),
        **_figures(items, decided, boot),
        "per_category": {
            c: {
                **_figures([it for it in items if it.category == c], decided, boot),
                "decisions": dict(sorted(Counter(d.label for d in decisions if d.category == c).items())),
            }
            for c in categories
        },
        "items": [d.to_dict() for d in decisions],
        "guarantee": None,
    }
    if policy["rule"] == "guarantee":  # checked on the items the policy let the judge decide alone
        wrong = [
            None if it.majority is None or it.item_id not in decided else it.judges[POLICY_KEY].label != it.majority
            for it in items
        ]
        g = policy["guarantee"]
        figures["guarantee"] = check_on_holdout(
            g["threshold"], [it.item_id in decided for it in items], wrong, target=g["target"], confidence=boot.level
        )
    with store.transaction():  # the check and the record are one: two concurrent tests cannot both pass
        previous = _previous_uses(store, data_hash, items, force)
        result: dict[str, Any] = {
            "kind": "juge-policy-test",
            "policy_hash": policy["policy_hash"],
            "judges": policy["judges"],
            "rule": policy["rule"],
            "split": split,
            "data_hash": data_hash,
            "forced": bool(previous),
            "previous_uses": [
                {
                    "used_at": u["used_at"],
                    "policy_hash": u["policy_hash"],
                    "forced": bool(u["forced"]),
                    "shared_items": len(u["shared_items"]),
                    "shared_groups": len(u["shared_groups"]),
                }
                for u in previous
            ],
            **figures,
        }
        if result["forced"]:
            result["warning"] = f"FORCED: {_used_before(previous)}; these figures are not an untouched holdout estimate"
        if before_recording is not None:
            before_recording(result)
        store.record_holdout_use(
            data_hash,
            policy["policy_hash"],
            bool(previous),
            {
                "decisions": result["decisions"],
                "judge_decides": result["judge_decides"],
                "vs_majority": result["on_judged_items"]["vs_majority"]["agreement"],
            },
            items=[(it.item_id, it.group) for it in items],
        )
    return result


def _previous_uses(store: Store, data_hash: str, items: Sequence[PairItem], force: bool) -> list[dict[str, Any]]:
    """Earlier tests of this holdout: the same data hash, or any shared item id or group (with any policy).

    Refuses (HoldoutAlreadyUsed) unless ``force``: dropping an item, editing a label or renaming the split
    changes the data hash but not the items a person already saw figures for.
    """
    by_id = {u["id"]: {**u, "shared_items": [], "shared_groups": []} for u in store.holdout_uses(data_hash)}
    by_id |= {u["id"]: u for u in store.holdout_uses_sharing([it.item_id for it in items], [it.group for it in items])}
    previous = [by_id[k] for k in sorted(by_id)]
    if previous and not force:
        raise HoldoutAlreadyUsed(
            f"{_used_before(previous)}. A holdout is evaluated once; a second test, even on a subset, relabelled or "
            "renamed copy, makes its figures optimistic. Test on items no earlier test used, or pass --force to test "
            "again: the result will be flagged as forced."
        )
    return previous


def _used_before(previous: Sequence[dict[str, Any]]) -> str:
    """Which earlier tests used these items, in words: the first one, and how many there were."""
    first = previous[0]
    if first["shared_items"] or first["shared_groups"]:
        examples = []
        if first["shared_items"]:
            examples.append(f"item {first['shared_items'][0]!r}")
        if first["shared_groups"]:
            examples.append(f"group {first['shared_groups'][0]!r}")
        what = (
            f"{len(first['shared_items'])} of these items and {len(first['shared_groups'])} of their groups "
            f"(e.g. {' and '.join(examples)}) were"
        )
    else:
        what = f"this holdout (data hash {first['data_hash'][:12]}) was"
    return (
        f"{what} already tested on {first['used_at']} with policy {first['policy_hash'][:12]} "
        f"({len(previous)} earlier test(s) of these items)"
    )
