"""What changed in a judge between two runs: its model, and a unified diff of the prompt it read
for the same case (rubric and template changes show there, whatever template file they came from).

A run whose answers came from the cache logged no call: its prompts are those of the run that paid for the
cache entries, the latest other run with the same judge version (name, template, template hash) and the
same case record, since that version and that case render the same prompt."""

from __future__ import annotations

import difflib
from typing import Any

from juge.data.records import Judgment
from juge.store import Store

Key = tuple[str, str, str | None]  # (judge, item, order)


def _prompts(store: Store, run_id: str) -> dict[Key, list[dict[str, str]]]:
    """(judge, item, order) -> the messages of the verdict call (a solve-first call is skipped)."""
    out: dict[Key, list[dict[str, str]]] = {}
    for request in store.call_requests(run_id):
        meta = request.get("meta") or {}
        judge, item = meta.get("judge"), meta.get("item_id")
        if not judge or not item or judge == "system" or str(meta.get("template", "")).endswith("/solve"):
            continue
        out.setdefault((judge, item, meta.get("order")), request.get("messages") or [])
    return out


def _borrowed(store: Store, run_id: str, name: str, version: tuple[str, str, str]) -> dict[Key, list[dict[str, str]]]:
    """Judge `name`'s prompts from the calls of the run that paid for `run_id`'s cache entries: the newest other
    run with the same judge version that logged calls of it, on the cases whose record is the same in both."""
    _, template, template_hash = version
    cases = None
    for other in store.list_runs():  # newest first
        if other["id"] == run_id or not any(
            j.get("name") == name and j.get("template") == template and j.get("template_hash") == template_hash
            for j in (other.get("config") or {}).get("judges") or []
        ):
            continue
        borrowed = {k: v for k, v in _prompts(store, other["id"]).items() if k[0] == name}
        if not borrowed:
            continue
        if cases is None:
            cases = {c.id: c for c in store.run_cases(run_id)}
        theirs = {c.id: c for c in store.run_cases(other["id"])}
        same = {k: v for k, v in borrowed.items() if k[1] in cases and theirs.get(k[1]) == cases[k[1]]}
        if same:
            return same
    return {}


def _version(judgments: list[Judgment], judge: str) -> tuple[str, str, str] | None:
    for j in judgments:
        if j.judge == judge:
            return j.model, j.template, j.template_hash
    return None


def judge_diffs(
    store: Store, run_a: str, run_b: str, judgments_a: list[Judgment], judgments_b: list[Judgment]
) -> list[dict[str, Any]]:
    """Per judge in both runs whose model, template or hash differ: the versions and the prompt diff
    on the first case both runs asked it about (`diff` is empty when neither run logged such a call)."""
    names = sorted({j.judge for j in judgments_a} & {j.judge for j in judgments_b})
    own_a: dict[Key, list[dict[str, str]]] | None = None
    own_b: dict[Key, list[dict[str, str]]] = {}
    out = []
    for name in names:
        va, vb = _version(judgments_a, name), _version(judgments_b, name)
        if va == vb or va is None or vb is None:
            continue
        if own_a is None:
            own_a, own_b = _prompts(store, run_a), _prompts(store, run_b)
        prompts_a = {k: v for k, v in own_a.items() if k[0] == name}
        prompts_b = {k: v for k, v in own_b.items() if k[0] == name}
        if not any(k in prompts_b for k in prompts_a):  # a run answered (partly) from the cache: borrow
            prompts_a = {**_borrowed(store, run_a, name, va), **prompts_a}
            prompts_b = {**_borrowed(store, run_b, name, vb), **prompts_b}
        shared = sorted(k for k in prompts_a if k in prompts_b)
        diff: list[str] = []
        item = order = None
        if shared:
            _, item, order = shared[0]
            a_text = _as_text(prompts_a[shared[0]])
            b_text = _as_text(prompts_b[shared[0]])
            diff = list(
                difflib.unified_diff(
                    a_text,
                    b_text,
                    fromfile=f"{run_a} {name} {va[1]}#{va[2][:8]}",
                    tofile=f"{run_b} {name} {vb[1]}#{vb[2][:8]}",
                    lineterm="",
                    n=1,
                )
            )
        out.append(
            {
                "judge": name,
                "a": dict(zip(("model", "template", "template_hash"), va)),
                "b": dict(zip(("model", "template", "template_hash"), vb)),
                "item_id": item,
                "order": order,
                "prompt_diff": diff,
            }
        )
    return out


def _as_text(messages: list[dict[str, str]]) -> list[str]:
    lines: list[str] = []
    for m in messages:
        lines.append(f"[{m.get('role')}]")
        lines.extend(str(m.get("content", "")).splitlines())
    return lines
