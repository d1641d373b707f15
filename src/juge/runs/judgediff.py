"""What changed in a judge between two runs: its model, and a unified diff of the prompt it read
for the same case (rubric and template changes show there, whatever template file they came from)."""

from __future__ import annotations

import difflib
from typing import Any

from juge.data.records import Judgment
from juge.store import Store


def _prompts(store: Store, run_id: str) -> dict[tuple[str, str, str | None], list[dict[str, str]]]:
    """(judge, item, order) -> the messages of the verdict call (a solve-first call is skipped)."""
    out: dict[tuple[str, str, str | None], list[dict[str, str]]] = {}
    for request in store.call_requests(run_id):
        meta = request.get("meta") or {}
        judge, item = meta.get("judge"), meta.get("item_id")
        if not judge or not item or judge == "system" or str(meta.get("template", "")).endswith("/solve"):
            continue
        out.setdefault((judge, item, meta.get("order")), request.get("messages") or [])
    return out


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
    prompts_a = prompts_b = None
    out = []
    for name in names:
        va, vb = _version(judgments_a, name), _version(judgments_b, name)
        if va == vb or va is None or vb is None:
            continue
        if prompts_a is None:
            prompts_a, prompts_b = _prompts(store, run_a), _prompts(store, run_b)
        assert prompts_b is not None
        shared = sorted(k for k in prompts_a if k[0] == name and k in prompts_b)
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
