"""Test a judge policy once on the holdout split, and record that the holdout was used.

Every test is recorded in three places: the store's ``holdout_uses`` table (data hash; item ids,
groups and content fingerprints in ``holdout_use_items``), the machine's registry
(:mod:`juge.policy.registry`, content fingerprints, whatever the store or directory) and the
policy file itself (``holdout_tests``). A test whose data hash, or any item id, group or content
fingerprint, was in an earlier test found in any of them (with any policy) is refused unless
forced: a subset, a relabelled copy, a renamed split or a copy with ids prefixed and groups
shifted is the same holdout. A forced test is flagged FORCED in its result, the policy file and
every later one (``previous_uses``).

The conclusion: per category, whether the dev decision stands on holdout (for a category the judge
decides, judge vs person minus person vs person on the category's holdout items with a verdict is
still within the margin, compared as printed, or under ``lower-bound`` the interval's lower bound
is still above -margin); overall, whether every such category held and the gap on all the items
the judge decided is within the margin too (``guarantee``: whether the guarantee held). A category
the policy sends to a person stands whatever holdout shows: a person deciding is never the risk.

Figures on the holdout (all with a clustered bootstrap interval over items):
the decisions and the share the judge decides alone; on the items the judge decides,
agreement and kappa with the majority, judge vs each person, and person vs person on
the same items; the same judge (the policy's template per category) on every holdout
item with no policy; and all of it per category.
"""

from __future__ import annotations

import json
import os
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from juge.calibration.pairtable import PairItem
from juge.calibration.pairwise import Bootstrap, ceiling, vs_majority, vs_people
from juge.data.draw import Weighting
from juge.data.records import Case, Judgment
from juge.errors import InputError
from juge.files import staged_output
from juge.policy.conclusion import gap_conclusion, guarantee_conclusion, margin_gap, overall_conclusion
from juge.policy.configurations import Measure
from juge.policy.derivation import PairStudyData
from juge.policy.file import (
    no_split_error,
    policy_hash,
    read_policy,
    split_hash,
)
from juge.policy.grades import grade_holdout_figures, grade_holdout_items, grade_policy_measure
from juge.policy.guarantee import check_on_holdout
from juge.policy.pair_rows import category_row
from juge.policy.registry import Registry, case_fingerprint, earlier_fingerprint, fingerprint_set_hash
from juge.policy.results import HoldoutTest, PolicyResult
from juge.policy.route import route_item
from juge.policy.routed import (
    JUDGE,
    RouteDecision,
    check_versions,
)
from juge.stats import ratio_estimate
from juge.store import Store

POLICY_KEY = "policy"


class HoldoutAlreadyUsed(InputError):
    """The holdout was tested before; a second test needs --force (force=True in Python)."""


def _figures(items: Sequence[PairItem], decided: set[str], boot: Bootstrap) -> dict[str, Any]:
    judged = [it for it in items if it.item_id in decided]
    return {
        "n_items": len(items),
        "judge_decides": ratio_estimate(
            [it.item_id in decided for it in items], [1] * len(items), **boot.kwargs, item_weights=boot.weights(items)
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


@dataclass(frozen=True)
class LedgerItem:
    """What the ledgers keep of one tested item: its id and group (this store) and its content fingerprint."""

    item_id: str
    group: str
    fingerprint: str
    earlier: str = ""  # its fingerprint as older tests recorded it: looked up, never recorded


def ledger_items(item_ids: Iterable[str], cases: Iterable[Case]) -> list[LedgerItem]:
    by_id = {c.id: c for c in cases}
    return [LedgerItem(i, by_id[i].group, case_fingerprint(by_id[i]), earlier_fingerprint(by_id[i])) for i in item_ids]


def check_test_split(policy: PolicyResult, data_hash: str, groups: Iterable[str], split: str) -> None:
    """The test items are not the dev items, and share no group with them."""
    derived_on = policy.dev.split or "dev"
    if data_hash == policy.dev.data_hash:
        raise InputError(
            f"the policy was derived on these very items (split {derived_on!r}); testing it on them "
            "measures nothing. Test it on items it has not seen: --split NAME of another split"
        )
    overlap = sorted(set(groups) & set(policy.dev.groups))
    if overlap:
        raise InputError(
            f"{len(overlap)} groups of split {split!r} are also in split {derived_on!r} the policy was "
            f"derived on (e.g. {overlap[0]!r}): the test items must not share groups with them"
        )


def previous_tests(
    store: Store,
    registry: Registry,
    policy: PolicyResult,
    data_hash: str,
    items: Sequence[LedgerItem],
    force: bool,
) -> list[dict[str, Any]]:
    """Earlier tests of these items found in the store (same data hash, or a shared item id, group or content
    fingerprint), in the machine's registry or in the policy file (a shared content fingerprint), with any
    policy; one entry per test, naming where it was found.

    Refuses (HoldoutAlreadyUsed) unless ``force``: dropping an item, editing a label, renaming the split, or
    copying the items under new ids and groups to another store or directory does not make them unseen.
    """
    fingerprints = {it.fingerprint for it in items} | {it.earlier for it in items if it.earlier}
    found: dict[str, dict[str, Any]] = {}

    def add(key: str, where: str, row: dict[str, Any]) -> None:
        entry = found.setdefault(
            key,
            {
                "test_id": row.get("test_id"),
                "used_at": row["used_at"],
                "policy_hash": row["policy_hash"],
                "forced": bool(row["forced"]),
                "shared_items": 0,
                "shared_groups": 0,
                "examples": [],
                "found_in": [],
            },
        )
        entry["found_in"].append(where)
        entry["shared_items"] = max(entry["shared_items"], row.get("n_shared_items", 0))
        entry["shared_groups"] = max(entry["shared_groups"], row.get("n_shared_groups", 0))
        entry["examples"] += [e for e in row.get("examples", []) if e not in entry["examples"]]

    by_id = {
        u["id"]: {**u, "shared_items": [], "shared_groups": [], "shared_fingerprints": len(items)}
        for u in store.holdout_uses(data_hash)
    }
    by_id |= {
        u["id"]: u
        for u in store.holdout_uses_sharing([it.item_id for it in items], [it.group for it in items], fingerprints)
    }
    for use_id in sorted(by_id):
        u = by_id[use_id]
        test_id = (json.loads(u["result"]) if u.get("result") else {}).get("test_id")
        examples = [f"item {u['shared_items'][0]!r}"] if u["shared_items"] else []
        examples += [f"group {u['shared_groups'][0]!r}"] if u["shared_groups"] else []
        add(
            test_id or f"store-{use_id}",
            "store",
            {
                **u,
                "test_id": test_id,
                "n_shared_items": max(len(u["shared_items"]), u["shared_fingerprints"]),
                "n_shared_groups": len(u["shared_groups"]),
                "examples": examples,
            },
        )
    for t in registry.tests_sharing(fingerprints):
        add(
            t["test_id"],
            f"this machine's registry (store {t['store']}, from {t['cwd']})",
            {**t, "n_shared_items": t["shared_items"]},
        )
    for record in policy.holdout_tests:
        shared = len(fingerprints & set(record.fingerprints))
        if shared:
            add(
                record.test_id or f"policy-{record.used_at}",
                "the policy file",
                {**record.to_dict(), "policy_hash": policy.policy_hash, "n_shared_items": shared},
            )
    previous = sorted(found.values(), key=lambda u: u["used_at"])
    if previous and not force:
        raise HoldoutAlreadyUsed(
            f"{_used_before(previous)}. A holdout is evaluated once; a second test, even on a subset, relabelled, "
            "renamed or copied holdout, makes its figures optimistic. Test on items no earlier test used, or test "
            "again with --force (force=True from Python): the result will be flagged as FORCED."
        )
    return previous


def _used_before(previous: Sequence[dict[str, Any]]) -> str:
    """Which earlier tests used these items, in words: the first one, where it was found, and how many there were."""
    first = previous[0]
    what = f"{first['shared_items']} of these items"
    if first["shared_groups"]:
        what += f" and {first['shared_groups']} of their groups"
    if first["examples"]:
        what += f" (e.g. {' and '.join(first['examples'][:2])})"
    return (
        f"{what} were already tested on {first['used_at']} with policy {first['policy_hash'][:12]} "
        f"(found in {'; '.join(first['found_in'])}; {len(previous)} earlier test(s) of these items)"
    )


def record_test(
    store: Store,
    registry: Registry,
    policy: PolicyResult,
    result: dict[str, Any],
    items: Sequence[LedgerItem],
    summary: dict[str, Any],
) -> None:
    """Record the test in the store and in the machine's registry (call inside both transactions)."""
    store.record_holdout_use(
        result["data_hash"],
        policy.policy_hash,
        result["forced"],
        {"test_id": result["test_id"], **summary},
        items=[(it.item_id, it.group, it.fingerprint) for it in items],
    )
    registry.record(
        test_id=result["test_id"],
        policy_hash=policy.policy_hash,
        split=result["split"],
        data_hash=result["data_hash"],
        forced=result["forced"],
        fingerprints=[it.fingerprint for it in items],
        store=str(Path(store.path).resolve()) if getattr(store, "path", None) else None,
        used_at=result["tested_at"],
    )


def policy_file_entry(result: dict[str, Any], items: Sequence[LedgerItem]) -> dict[str, Any]:
    """What the policy file keeps of one test: when, on what, forced or not, the conclusion, and the items'
    content fingerprints (so the same file refuses them on any machine)."""
    return {
        "test_id": result["test_id"],
        "used_at": result["tested_at"],
        "split": result["split"],
        "data_hash": result["data_hash"],
        "n_items": len(items),
        "forced": result["forced"],
        "held": result["conclusion"]["held"],
        "conclusion": result["conclusion"]["reason"],
        "fingerprints_hash": fingerprint_set_hash(it.fingerprint for it in items),
        "fingerprints": sorted({it.fingerprint for it in items}),
    }


def new_test_header(policy: PolicyResult, split: str, data_hash: str, previous: Sequence[dict[str, Any]]) -> dict:
    """The fields every test result starts with."""
    header: dict[str, Any] = {
        "kind": "juge-policy-test",
        "schema_version": TEST_SCHEMA_VERSION,
        "test_id": uuid.uuid4().hex,
        "tested_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "policy_hash": policy.policy_hash,
        "judge_kind": policy.judge_kind,
        "judges": {key: info.to_dict() for key, info in policy.judges.items()},
        "rule": policy.rule,
        "margin": policy.margin,
        "split": split,
        "data_hash": data_hash,
        "forced": bool(previous),
        "previous_uses": [
            {
                k: u[k]
                for k in ("test_id", "used_at", "policy_hash", "forced", "shared_items", "shared_groups", "found_in")
            }
            for u in previous
        ],
    }
    if previous:
        header["warning"] = f"FORCED: {_used_before(previous)}; these figures are not an untouched holdout estimate"
    return header


TEST_SCHEMA_VERSION = 2


def run_holdout_test(
    policy: PolicyResult | Mapping[str, Any],
    data: Any,
    store: Store,
    *,
    split: str = "holdout",
    force: bool = False,
    boot: Bootstrap = Bootstrap(),
    before_recording: Callable[[dict[str, Any]], None] | None = None,
    registry: Registry | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
    weighting: Weighting = "none",
) -> dict[str, Any]:
    """Apply the policy to the holdout split, once; record the test and return the result.

    ``data`` is a ``PairStudyData`` for a pairwise policy, a ``GradeStudyData`` for a PASS/FAIL or score
    policy. ``before_recording(result)`` runs inside the transactions that record the test (e.g. writing
    the outputs to temporary files): if it raises, nothing is recorded and the holdout is not used up.
    ``registry``: the machine's registry (default: the one at :func:`juge.policy.registry.registry_path`).
    ``prices``: ``[prices]`` rows (US$ per million tokens) for a cascade's cost per item (default: the policy's);
    ``minutes_per_label``: person-minutes per label for the minutes saved (default: the policy's).
    ``weighting``: how the labels count (:mod:`juge.data.draw`), recorded in the result.
    """
    policy = PolicyResult.of(policy)
    kind = policy.judge_kind
    if kind == "pairwise":
        table = data.table().split(split)
        items = table.items
    else:
        table, items = grade_holdout_items(policy, data, split)
    if not items:
        raise no_split_error(split, data.cases)
    ids = {it.item_id for it in items}
    data_hash = split_hash([c for c in data.cases if c.id in ids], data.labels)
    check_test_split(policy, data_hash, {it.group for it in items}, split)
    ledger = ledger_items([it.item_id for it in items], data.cases)
    for key in policy.judges:  # another model or template version is bad input, named before the ledgers
        check_versions(
            policy, key, (j for j in data.judgments if j.item_id in ids and f"{j.judge}/{j.template}" == key)
        )
    own_registry = registry is None
    registry = registry or Registry()
    try:
        previous_tests(store, registry, policy, data_hash, ledger, force)  # refuse early, before the figures
        if kind == "pairwise":
            figures = _pair_figures(policy, data, items, boot, prices, minutes_per_label)
        else:
            ids = {it.item_id for it in items}
            by_item: dict[str, list[Judgment]] = {}
            for j in data.judgments:
                if j.item_id in ids:
                    by_item.setdefault(j.item_id, []).append(j)
            routes = [route_item(policy, it.item_id, it.category, by_item.get(it.item_id, [])) for it in items]
            if policy.cascade is not None:
                prices, minutes = cascade_cost_inputs(policy, prices, minutes_per_label)
            figures = grade_holdout_figures(policy, data, table, items, routes, boot, prices)
            if policy.cascade is not None:
                figures["cascade"].update(
                    holdout_configurations(
                        policy,
                        data.judgments,
                        items,
                        measure=grade_policy_measure(policy, table, items, boot),
                        level=boot.level,
                        prices=prices,
                        minutes_per_label=minutes,
                    )
                )
        with store.transaction(), registry.locked():  # the checks and the records are one
            previous = previous_tests(store, registry, policy, data_hash, ledger, force)
            summary = figures.pop("_summary")
            held = figures["conclusion"]["held"]
            status = "untested" if held is None else "held" if held else "not held"  # juge.policy.status's names
            header = new_test_header(policy, split, data_hash, previous)
            result = {**header, "status": status, "weighting": weighting, **figures, "_ledger": ledger}
            if before_recording is not None:
                before_recording(result)
            record_test(store, registry, policy, result, ledger, summary)
    finally:
        if own_registry:
            registry.close()
    del result["_ledger"]
    return result


def _pair_figures(
    policy: PolicyResult,
    data: PairStudyData,
    items: list[PairItem],
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
) -> dict:
    ids = {it.item_id for it in items}
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
    rule = "lower-bound" if policy.rule == "lower-bound" else "margin"
    figures: dict[str, Any] = {
        "decisions": dict(sorted(counts.items())),
        **_figures(items, decided, boot),
        "per_category": {},
        "items": [d.to_dict() for d in decisions],
        "guarantee": None,
    }
    per_conclusion = {}
    for c in categories:
        cat_items = [it for it in items if it.category == c]
        holdout_row = category_row(cat_items, POLICY_KEY, margin=policy.margin, rule=rule, boot=boot)
        dev_row = policy.categories.get(c)
        conclusion = gap_conclusion(
            policy.decision(c), None if dev_row is None else dev_row.gap, holdout_row, rule=rule
        )
        per_conclusion[c] = conclusion
        figures["per_category"][c] = {
            **_figures(cat_items, decided, boot),
            "decisions": dict(sorted(Counter(d.label for d in decisions if d.category == c).items())),
            "holdout_gap": {k: holdout_row[k] for k in ("n_with_verdict", "vs_people", "ceiling", "gap", "difference")},
            "conclusion": conclusion,
        }
    judged_block = figures["on_judged_items"]
    overall_gap = margin_gap(judged_block["vs_people"]["agreement"], judged_block["ceiling"], policy.margin)
    g = policy.guarantee
    if policy.rule == "guarantee" and g is not None:  # checked on the items the policy let the judge decide alone
        wrong = [
            None if it.majority is None or it.item_id not in decided else it.judges[POLICY_KEY].label != it.majority
            for it in items
        ]
        figures["guarantee"] = check_on_holdout(
            g.threshold, [it.item_id in decided for it in items], wrong, target=g.target, confidence=boot.level
        )
        conclusion = guarantee_conclusion(figures["guarantee"]["held"], cascade=False)
    elif policy.cascade is not None:
        figures["cascade"] = _cascade_figures(
            policy, data, items, decisions, judged_block, boot, prices, minutes_per_label
        )
        conclusion = guarantee_conclusion(figures["cascade"]["guarantee"]["held"], cascade=True)
    else:
        conclusion = overall_conclusion(per_conclusion, overall_gap)
    figures["conclusion"] = {**conclusion, "on_judged_items": overall_gap}
    figures["_summary"] = {
        "decisions": figures["decisions"],
        "judge_decides": figures["judge_decides"],
        "vs_majority": judged_block["vs_majority"]["agreement"],
        "held": conclusion["held"],
    }
    return figures


def cascade_cost_inputs(
    policy: PolicyResult, prices: Mapping[str, Mapping[str, float]] | None, minutes_per_label: float | None
) -> tuple[Mapping[str, Mapping[str, float]] | None, float]:
    """A cascade's prices and minutes per label at ``policy test``: as given, else the policy's, else the
    defaults (built-in prices, :data:`juge.policy.configurations.MINUTES_PER_LABEL`)."""
    from juge.policy.configurations import MINUTES_PER_LABEL

    assert policy.cascade is not None
    if prices is None and policy.cascade.prices:
        prices = {m: dict(r) for m, r in policy.cascade.prices.items()}
    if minutes_per_label is None:
        minutes_per_label = policy.cascade.minutes_per_label
    return prices, MINUTES_PER_LABEL if minutes_per_label is None else minutes_per_label


def _cascade_figures(
    policy: PolicyResult,
    data: PairStudyData,
    items: list[PairItem],
    decisions: list[RouteDecision],
    judged_block: dict[str, Any],
    boot: Bootstrap,
    prices: Mapping[str, Mapping[str, float]] | None,
    minutes_per_label: float | None,
) -> dict[str, Any]:
    """A pairwise cascade on holdout (:func:`juge.policy.cascade.cascade_on_holdout`), and every configuration the
    policy considered on dev, routed and measured on holdout the same way (:func:`holdout_configurations`)."""
    from juge.policy.cascade import cascade_on_holdout
    from juge.policy.configurations import pair_measure

    prices, minutes_per_label = cascade_cost_inputs(policy, prices, minutes_per_label)
    decided = {d.item_id for d in decisions if d.route == JUDGE}
    wrong = [
        None if it.majority is None or it.item_id not in decided else it.judges[POLICY_KEY].label != it.majority
        for it in items
    ]
    return {
        **cascade_on_holdout(
            policy, decisions, wrong, data.judgments, vs_majority=judged_block["vs_majority"]["agreement"],
            vs_people=judged_block["vs_people"]["agreement"], level=boot.level, prices=prices,
        ),
        **holdout_configurations(
            policy, data.judgments, items, measure=pair_measure(items, boot), level=boot.level, prices=prices,
            minutes_per_label=minutes_per_label,
        ),
    }  # fmt: skip


def holdout_configurations(
    policy: PolicyResult,
    judgments: Sequence[Any],
    items: Sequence[Any],
    *,
    measure: Measure,
    level: float,
    prices: Mapping[str, Mapping[str, float]] | None,
    minutes_per_label: float,
) -> dict[str, Any]:
    """Each configuration of the policy, routed on the holdout items (``item_id``, ``category``) as ``juge route``
    would route it (its stages with their dev thresholds), with the figures of dev (agreement by the kind's
    ``measure``) and whether its guarantee held; the dev choice named. Any judge kind."""
    from juge.policy.configurations import Decided, as_policy, configuration_figures, with_threshold

    assert policy.cascade is not None
    c = policy.cascade
    if not c.configurations:
        return {}
    base = {s.name: s for s in [*c.stages, *c.considered]}
    by_item: dict[str, list] = {}
    for j in judgments:
        by_item.setdefault(j.item_id, []).append(j)
    rows = []
    for config in c.configurations:
        stages = [with_threshold(base[s.name], s.threshold) for s in config.stages]
        routed = as_policy(policy, stages)
        decisions = [route_item(routed, it.item_id, it.category, by_item.get(it.item_id, [])) for it in items]
        decided = [
            Decided(d.item_id, d.category, d.stage if d.route == JUDGE else None,
                    d.template if d.route == JUDGE else None)
            for d in decisions
        ]  # fmt: skip
        agreement = measure(decided)
        figures = configuration_figures(
            decided, stages, judgments, agreement=agreement, prices=prices, minutes_per_label=minutes_per_label
        )
        guarantee = check_on_holdout(
            None, [d.stage is not None for d in decided], agreement.wrong, target=c.target, confidence=level
        )
        rows.append({"name": config.name, "kind": config.kind, "chosen": config.chosen, "holdout": figures,
                     "guarantee_held": guarantee["held"], "disagreement": guarantee["disagreement"]})  # fmt: skip
    return {"configurations": rows, "chosen": None if c.choice is None else c.choice.chosen}


def test_policy(
    policy_path: Path | str,
    data: Any,
    store: Store,
    *,
    split: str = "holdout",
    force: bool = False,
    boot: Bootstrap = Bootstrap(),
    json_path: Path | str | None = None,
    registry: Registry | None = None,
    prices: Mapping[str, Mapping[str, float]] | None = None,
    minutes_per_label: float | None = None,
    weighting: Weighting = "none",
) -> dict[str, Any]:
    """`juge policy test`: read the policy, test it once on ``split``, and write the test into the policy file
    (and the result to ``json_path``). Both files are staged and renamed only once the test is recorded, so an
    unwritable one fails before the holdout is used up, and nothing is half-written."""
    policy_path = Path(policy_path)  # the Python API is called with str paths too
    json_path = None if json_path is None else Path(json_path)
    document = read_policy(policy_path)
    file_keys = set(json.loads(policy_path.read_text(encoding="utf-8")))
    with staged_output(json_path, "--json") as json_tmp, staged_output(policy_path, "--policy") as policy_tmp:
        assert policy_tmp is not None

        def stage(result: dict[str, Any]) -> None:
            ledger = result["_ledger"]
            if json_tmp is not None:
                _write_json(json_tmp, {k: v for k, v in result.items() if not k.startswith("_")})
            # The file's own keys (read_policy adds judge_kind to a schema 1 file in memory), and schema_version.
            written = {k: v for k, v in document.items() if k in file_keys}
            tests = [*(document.get("holdout_tests") or []), policy_file_entry(result, ledger)]
            updated = PolicyResult.model_validate({**written, "holdout_tests": tests}).to_dict()
            assert policy_hash(updated) == document["policy_hash"]  # the tests are outside what the hash covers
            _write_json(policy_tmp, updated)

        result = run_holdout_test(
            PolicyResult.of(document), data, store, split=split, force=force, boot=boot, before_recording=stage,
            registry=registry, prices=prices, minutes_per_label=minutes_per_label, weighting=weighting,
        )  # fmt: skip
    return result


test_policy.__test__ = False  # type: ignore[attr-defined]  # a function of juge, not a test for pytest


def _write_json(path: Path, data: dict[str, Any]) -> None:
    with open(path, "w", encoding="utf-8") as f:
        f.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
        f.flush()
        os.fsync(f.fileno())


def test_policy_result(policy_path: Path | str, data: Any, store: Store, **options: Any) -> HoldoutTest:
    """:func:`test_policy` as the typed :class:`juge.results.HoldoutTest` (``to_dict()`` is the --json file)."""
    return HoldoutTest.model_validate(test_policy(policy_path, data, store, **options))


test_policy_result.__test__ = False  # type: ignore[attr-defined]
