"""What a judge will be sent, without sending it: `juge prompt` and `juge run --dry-run`.

The messages come from the same `Judge.render` the engine calls, so what is printed is exactly
what a provider receives (a solve-first judge's second prompt holds a placeholder where its own
solution will go; the solution is only known after the first call).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from juge.data.records import Case
from juge.errors import InputError

OWN_SOLUTION_PLACEHOLDER = "(the judge's own solution, from its first call, goes here)"
SYSTEM_OUTPUT_PLACEHOLDER = "(the system's output, generated when the run starts)"


@dataclass(frozen=True)
class RenderedPrompt:
    """One call's messages: `step` is "verdict", or "solve" for a solve-first judge's first call."""

    judge: str
    setup: str
    template: str
    template_hash: str
    model: str
    case_id: str
    order: str | None
    step: str
    messages: list[dict[str, str]]
    allowed: list[str] | None = None
    json_schema: dict[str, Any] | None = None

    def to_dict(self) -> dict[str, Any]:
        return {k: getattr(self, k) for k in self.__dataclass_fields__}


def judge_prompts(judge: Any, case: Case, order: str | None = None) -> list[RenderedPrompt]:
    """The calls `judge` makes for `case` in `order` (default: its first order), in call order."""
    orders = judge.orders(case)
    if order is None:
        order = orders[0]
    elif order not in orders:
        shown = ", ".join(o for o in orders if o) or "none (it grades single answers)"
        raise InputError(f"--order {order}: judge {judge.name!r} takes order {shown}")
    common = {
        "judge": judge.name,
        "setup": judge.setup,
        "template": judge.template_id,
        "template_hash": judge.template_hash,
        "model": judge.model,
        "case_id": case.id,
        "order": order,
    }
    out = []
    own_solution = None
    if judge.solve_first:
        out.append(RenderedPrompt(**common, step="solve", messages=judge.render_solve(case)))
        own_solution = OWN_SOLUTION_PLACEHOLDER
    out.append(
        RenderedPrompt(
            **common,
            step="verdict",
            messages=judge.render(case, order=order, own_solution=own_solution),
            allowed=list(judge.allowed() or ()) if judge.constrained else None,
            json_schema=judge.json_schema() if judge.structured else None,
        )
    )
    return out


def applies(judge: Any, case: Case) -> bool:
    """Whether `judge` judges `case`: pairwise judges take pairs, the others single answers."""
    return (judge.setup == "pairwise") == case.is_pair


def pick_case(judge: Any, cases: Sequence[Case], case_id: str | None, where: str) -> Case:
    """The case to show: `case_id`, else the first case the judge applies to."""
    if case_id is not None:
        found = next((c for c in cases if c.id == case_id), None)
        if found is None:
            raise InputError(f"--case {case_id}: no case with that id in {where}")
        if not applies(judge, found):
            kind = "a pair" if found.is_pair else "a single answer"
            raise InputError(f"--case {case_id}: the case is {kind}; judge {judge.name!r} is a {judge.setup} judge")
        return found
    found = next((c for c in cases if applies(judge, c)), None)
    if found is None:
        raise InputError(f"{where}: no case judge {judge.name!r} ({judge.setup}) can judge")
    return found


def with_output_placeholder(case: Case) -> Case:
    """A case whose output the system under test will write, with a placeholder in its place."""
    if case.output is None and not case.is_pair:
        return case.model_copy(update={"output": SYSTEM_OUTPUT_PLACEHOLDER})
    return case


@dataclass
class DryRun:
    """What `juge run` would do: the calls per judge (before the cache), and one prompt of each."""

    n_cases: int
    calls: dict[str, int] = field(default_factory=dict)
    system_calls: int = 0
    examples: list[RenderedPrompt] = field(default_factory=list)

    def to_dict(self) -> dict[str, Any]:
        return {
            "n_cases": self.n_cases,
            "calls": self.calls,
            "system_calls": self.system_calls,
            "examples": [p.to_dict() for p in self.examples],
        }


def dry_run(cases: Iterable[Case], judges: Sequence[Any], repeat: int = 1, *, system: bool = False) -> DryRun:
    """Count the calls a run would make (each judge's solve-first calls included) and render the
    first case of each judge; `cases` is read once, never held whole."""
    calls: Counter[str] = Counter()
    first: dict[str, Case] = {}
    n_cases = system_calls = 0
    for case in cases:
        n_cases += 1
        shown = with_output_placeholder(case) if system else case
        system_calls += int(system and not case.is_pair)
        for judge in judges:
            if applies(judge, shown):
                calls[judge.name] += len(judge.orders(shown)) * repeat * (2 if judge.solve_first else 1)
                first.setdefault(judge.name, shown)
    result = DryRun(n_cases=n_cases, calls={j.name: calls.get(j.name, 0) for j in judges}, system_calls=system_calls)
    for judge in judges:
        if judge.name in first:
            result.examples.extend(judge_prompts(judge, first[judge.name]))
    return result
