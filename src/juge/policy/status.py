"""A policy's status, from the records in its file: untested, held, not held, forced (expired is for a policy whose
judge changed, and refuses like not held).

- ``untested``: no holdout test is recorded (or the last one could not conclude); it routes, with a note.
- ``held`` / ``not held``: what the last recorded holdout test concluded.
- ``forced``: the last test did not hold, and someone used the policy anyway with ``--force`` (recorded in the
  file's ``forced_uses``, and in that command's result).

``route`` (recorded calls and live) and ``audit-sample`` refuse a policy whose status needs ``--force`` (not
held, forced, expired), naming the test; each forced use is recorded again. :func:`policy_status` is the one
place the status is worked out; the file's ``status`` key is written from it for people and other tools.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict

from juge.errors import InputError

StatusName = Literal["untested", "held", "not held", "forced", "expired"]
NEEDS_FORCE: tuple[StatusName, ...] = ("not held", "forced", "expired")
STATUS_KEYS = ("status", "forced_uses")  # kept in the policy file outside its hash, as holdout_tests


class PolicyStatus(BaseModel):
    """Where a policy stands, and the holdout test it rests on (``test_id`` None: untested)."""

    model_config = ConfigDict(frozen=True)

    status: StatusName
    test_id: str | None = None
    tested_at: str | None = None
    split: str | None = None
    data_hash: str | None = None
    n_items: int | None = None
    test_forced: bool = False
    conclusion: str | None = None
    forced_uses: int = 0

    @property
    def needs_force(self) -> bool:
        """Whether routing or auditing with this policy needs ``--force``."""
        return self.status in NEEDS_FORCE

    def test_words(self) -> str:
        """The test in words: when, on which holdout, and what it concluded."""
        if self.test_id is None:
            return "no holdout test is recorded"
        forced = " (a FORCED test: these items were tested before)" if self.test_forced else ""
        return (
            f"holdout test {self.test_id[:12]} of {self.tested_at}, split {self.split!r}, {self.n_items} items, "
            f"data hash {(self.data_hash or '')[:12]}{forced}: {self.conclusion}"
        )


def _get(record: Any, key: str) -> Any:
    return record.get(key) if isinstance(record, Mapping) else getattr(record, key, None)


def policy_status(holdout_tests: Sequence[Any], forced_uses: Sequence[Any] = ()) -> PolicyStatus:
    """The status from the policy file's records (holdout tests and forced uses, as dicts or models)."""
    if not holdout_tests:
        return PolicyStatus(status="untested")
    last = holdout_tests[-1]
    held = _get(last, "held")
    forced = [u for u in forced_uses if _get(u, "test_id") == _get(last, "test_id")]
    status: StatusName = "untested" if held is None else "held" if held else "forced" if forced else "not held"
    return PolicyStatus(
        status=status,
        test_id=_get(last, "test_id"),
        tested_at=_get(last, "used_at"),
        split=_get(last, "split"),
        data_hash=_get(last, "data_hash"),
        n_items=_get(last, "n_items"),
        test_forced=bool(_get(last, "forced")),
        conclusion=_get(last, "conclusion"),
        forced_uses=len(forced),
    )


def untested_note(status: PolicyStatus, policy_hash: str) -> str | None:
    """The note an untested policy routes with (None for any other status)."""
    if status.status != "untested":
        return None
    why = "no holdout test is recorded" if status.test_id is None else f"its {status.test_words()}"
    return (
        f"policy {policy_hash[:12]} is untested ({why}): its decisions rest on dev figures only; test it once "
        "with `juge policy test` before trusting them"
    )


def refuse_unless_forced(status: PolicyStatus, *, force: bool, source: str, command: str) -> str | None:
    """Refuse (InputError, exit 2) a policy whose status needs ``--force``, naming its test; with ``force``, the
    FORCED warning for the result. None when the policy needs no force."""
    if not status.needs_force:
        return None
    if not force:
        raise InputError(
            f"{source}: the policy did NOT HOLD on its {status.test_words()}; `{command}` does not use it. Derive a "
            f"new policy on fresh dev data, or pass --force to use it anyway (recorded in the policy file and the "
            "result)"
        )
    return f"FORCED: the policy did NOT HOLD on its {status.test_words()}; used anyway with --force (recorded)"


def forced_use(status: PolicyStatus, command: str) -> dict[str, Any]:
    """The record of one forced use, for the policy file's ``forced_uses``."""
    return {"used_at": datetime.now(UTC).isoformat(timespec="seconds"), "command": command, "test_id": status.test_id}


def record_forced_use(path: Path, record: Mapping[str, Any]) -> None:
    """Append a forced use to the policy file (outside its hash, as holdout_tests), and its status."""
    from juge.files import write_atomic

    document = json.loads(path.read_text(encoding="utf-8"))
    document["forced_uses"] = [*(document.get("forced_uses") or []), dict(record)]
    document["status"] = policy_status(document.get("holdout_tests") or [], document["forced_uses"]).status
    write_atomic(path, json.dumps(document, indent=2, ensure_ascii=False, default=str) + "\n")


class PolicyUse(BaseModel):
    """What a command using a policy (route, audit-sample) adds to its result: the policy's status, whether
    ``--force`` was needed (FORCED, recorded), and the note an untested policy routes with."""

    policy_status: StatusName
    forced: bool = False
    warning: str | None = None
    notes: list[str] = []


def use_policy(policy: Any, *, force: bool, command: str, path: str | Path | None = None) -> PolicyUse:
    """Check that ``policy`` (a PolicyResult) may be used by ``command``: refused (exit 2) when its status needs
    ``--force`` and ``force`` is not given; with it, the forced use is recorded in the policy file at ``path``
    (when the policy came from a file). Call it before the command's work; nothing is recorded on a refusal."""
    status: PolicyStatus = policy.standing
    source = str(path) if path is not None else "policy"
    warning = refuse_unless_forced(status, force=force, source=source, command=command)
    note = untested_note(status, policy.policy_hash)
    if warning is None:
        return PolicyUse(policy_status=status.status, notes=[note] if note else [])
    if path is not None:
        record_forced_use(Path(path), forced_use(status, command))
    else:
        warning += " (in this result only: the policy was not given as a file)"
    return PolicyUse(policy_status="forced", forced=True, warning=warning)
