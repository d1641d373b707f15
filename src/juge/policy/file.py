"""The policy file: its format and schema, its hash (what an edit breaks), reading one back, and the split hash
that ties a holdout test to its items. Every module of the policy reads these, so they sit below them all."""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from juge.data.records import Case, HumanLabel
from juge.errors import InputError
from juge.policy.status import STATUS_KEYS

POLICY_FORMAT = 1

# The policy file's schema: 2 adds judge_kind (pairwise, passfail, score) and holdout_tests; 3 adds the
# status (status, forced_uses) and each category's ruling and by_figures. A file without schema_version is a
# pairwise policy of schema 1; files of every schema load, their decisions read by juge.policy.decision.
SCHEMA_VERSION = 3

DIGITS = 3


def split_hash(cases: Iterable[Case], labels: Iterable[HumanLabel]) -> str:
    """sha256 of a split's items and human labels (canonical JSON, sorted): the split's identity."""
    cases = sorted(cases, key=lambda c: c.id)
    ids = {c.id for c in cases}
    h = hashlib.sha256()
    for c in cases:
        h.update(c.model_dump_json().encode() + b"\n")
    for lab in sorted((lab for lab in labels if lab.item_id in ids), key=lambda lab: (lab.item_id, lab.rater_id)):
        h.update(lab.model_dump_json().encode() + b"\n")
    return h.hexdigest()


def no_split_error(split: str, cases: Iterable[Case]) -> InputError:
    """No item with human votes in ``split``; when no item has a split at all, say how to make one."""
    splits = sorted({c.split for c in cases if c.split})
    if not splits:
        return InputError(
            f"no item has a `split` field, so there is no {split!r} split: make one with `juge split --items FILE "
            "--by group --holdout 0.3 --seed 0 -o FILE_WITH_SPLIT` (the same rows with split dev/holdout, by group) "
            "and give that file as --items (with --run too: the run's judgments join the items by id)"
        )
    return InputError(f"no item with split {split!r} and human votes; splits in the data: {', '.join(splits)}")


UNHASHED = ("policy_hash", "holdout_tests", "audits", *STATUS_KEYS)  # audits: appended by audit-sample

SCHEMA_2_KEYS = ("schema_version", "judge_kind")  # a schema 1 file was hashed without them


def policy_hash(policy: dict[str, Any]) -> str:
    """sha256 of the policy's canonical JSON, without the hash itself, the record of its holdout tests and its
    status (``juge policy test`` and a forced use append to them; every other edit breaks the hash). A schema 1 policy (pairwise, written
    before ``schema_version``) is hashed without the keys schema 2 added, so it keeps its hash when it gains
    ``schema_version: 1`` and ``judge_kind: pairwise`` on being written back."""
    unhashed = UNHASHED + (SCHEMA_2_KEYS if policy.get("schema_version", 1) == 1 else ())
    body = {k: v for k, v in policy.items() if k not in unhashed}
    return hashlib.sha256(json.dumps(body, sort_keys=True, default=str).encode()).hexdigest()


def r3(x: float | None) -> float | None:
    """A figure as the table shows it: rounded to 3 decimals."""
    return None if x is None else round(x, DIGITS)


def read_policy(path: Path | str) -> dict[str, Any]:
    """Load a policy JSON and check it is one juge wrote and nobody edited."""
    path = Path(path)  # the Python API is called with str paths too
    if not path.exists():
        raise InputError(f"{path}: policy file not found (write one with juge policy derive --json)")
    try:
        policy = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise InputError(f"{path}:{exc.lineno}: not valid JSON: {exc.msg}") from None
    if not isinstance(policy, dict) or policy.get("kind") != "juge-policy":
        raise InputError(f'{path}: not a juge policy (no "kind": "juge-policy")')
    if policy.get("format") != POLICY_FORMAT:
        raise InputError(f"{path}: policy format {policy.get('format')!r}; this juge reads format {POLICY_FORMAT}")
    if policy.get("policy_hash") != policy_hash(policy):
        raise InputError(f"{path}: the policy was edited after it was derived (hash mismatch); derive it again")
    if policy.get("schema_version", 1) > SCHEMA_VERSION:
        raise InputError(
            f"{path}: policy schema_version {policy['schema_version']}; this juge reads up to {SCHEMA_VERSION} "
            "(upgrade juge)"
        )
    if policy.get("schema_version", 1) == 1 and policy.setdefault("judge_kind", "pairwise") != "pairwise":
        raise InputError(f"{path}: a policy of schema 1 is for a pairwise judge, but it says {policy['judge_kind']!r}")
    return policy
