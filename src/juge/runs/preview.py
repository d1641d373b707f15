"""What a judge will be sent, without sending it: `juge prompt` and `juge run --dry-run`.

The messages come from the same `Judge.render` the engine calls, so what is printed is exactly
what a provider receives (a solve-first judge's second prompt holds a placeholder where its own
solution will go; the solution is only known after the first call).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.data.records import Case
from juge.errors import InputError
from juge.runs.results import DryRun, RenderedPrompt

if TYPE_CHECKING:
    from juge.config import EvalConfig
    from juge.judges.judge import Judge

OWN_SOLUTION_PLACEHOLDER = "(the judge's own solution, from its first call, goes here)"
SYSTEM_OUTPUT_PLACEHOLDER = "(the system's output, generated when the run starts)"


def judge_prompts(judge: Judge, case: Case, order: str | None = None) -> list[RenderedPrompt]:
    """The calls `judge` makes for `case` in `order` (default: its first order), in call order."""
    orders = judge.orders(case)
    if order is None:
        order = orders[0]
    elif order not in orders:
        shown = ", ".join(o for o in orders if o) or "none (it grades single answers)"
        raise InputError(f"--order {order}: judge {judge.name!r} takes order {shown}")
    common: dict[str, Any] = {
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
        out.append(
            RenderedPrompt(**common, step="solve", messages=judge.render_solve(case), allowed=None, json_schema=None)
        )
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


def applies(judge: Judge, case: Case) -> bool:
    """Whether `judge` judges `case`: pairwise judges take pairs, the others single answers."""
    return (judge.setup == "pairwise") == case.is_pair


def pick_case(judge: Judge, cases: Sequence[Case], case_id: str | None, where: str) -> Case:
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


def plan_calls(
    cases: Iterable[Case], judges: Sequence[Judge], repeat: int = 1, *, system: bool = False, source: str = ""
) -> DryRun:
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
    return DryRun(
        source=source,
        n_cases=n_cases,
        calls={j.name: calls.get(j.name, 0) for j in judges},
        system=system,
        system_calls=system_calls,
        examples=[p for j in judges if j.name in first for p in judge_prompts(j, first[j.name])],
    )


def prompt(
    judge: str | Path,
    *,
    case: str | None = None,
    eval_file: str | Path | None = None,
    cases: str | Path | None = None,
    order: str | None = None,
) -> list[RenderedPrompt]:
    """The exact messages ``judge`` is sent for one case (``juge prompt``), in call order; nothing is called.

    ``judge`` is a judge of ``eval_file`` (default ``./eval.toml``) by name, or a judge file (TOML) with
    ``cases`` (a cases file) or ``eval_file`` to take the case from. ``case`` defaults to the first case the
    judge takes; ``order`` (``12`` or ``21``) to a pairwise judge's first order. The messages come from the
    renderer the engine calls, so they are what a provider receives.

    >>> import juge
    >>> [m["role"] for m in juge.prompt("faithful", eval_file="examples/bakery/eval.toml")[0].messages]  # doctest: +SKIP
    ['system', 'user']
    """
    from juge.config import load_eval
    from juge.data.readers import read_cases
    from juge.judges import load_judge
    from juge.runs.providers import answering_judges

    judge_path = Path(judge)
    found = load_judge(judge_path) if judge_path.suffix == ".toml" and judge_path.is_file() else None
    if found is not None and cases is None and eval_file is None:
        raise InputError(f"{judge}: a judge file needs --cases FILE (or --eval FILE) to take a case from")
    if cases is not None:
        if found is None:
            raise InputError(
                f"--cases goes with a judge file; {str(judge)!r} is not one (give --eval for a judge's name)"
            )
        rows, where, system = read_cases(Path(cases)), str(cases), False
    else:
        path = Path(eval_file) if eval_file is not None else Path("eval.toml")
        if not path.is_file():
            raise InputError(f"{path}: eval file not found (give --eval FILE, or a judge file with --cases)")
        config = load_eval(path)
        if found is None:
            names = [j.name for j in config.judges]
            found = next((j for j in answering_judges(config) if j.name == str(judge)), None)
            if found is None:
                raise InputError(f"{path}: no judge named {str(judge)!r} (its judges: {', '.join(names) or 'none'})")
        rows, where = read_cases(config.cases_path, config.spec.mapping or None), str(config.cases_path)
        system = config.spec.system is not None
    chosen = pick_case(found, rows, case, where)
    return judge_prompts(found, with_output_placeholder(chosen) if system else chosen, order)


def dry_run(
    eval_or_path: str | Path | EvalConfig | None = None,
    *,
    cases: str | Path | None = None,
    judges: Sequence[str | Path] | None = None,
    mapping: Mapping[str, str] | None = None,
    only: Iterable[str] | None = None,
    repeat: int = 1,
    model: str | None = None,
    provider: str | None = None,
    limit: int | None = None,
) -> DryRun:
    """What :func:`juge.run` would do with these arguments (``juge run --dry-run``): the calls each judge
    would make (fewer when answers are in the cache) and the first prompt of each; nothing is called or
    stored. ``cases`` is read once, never held whole. The prompts name the model that answers: the one asked
    for, unless the provider (``provider``, else the eval's or the judge's) answers as its own.

    >>> import juge
    >>> juge.dry_run("examples/bakery/eval.toml").calls  # doctest: +SKIP
    {'faithful': 8, 'quality': 8}
    """
    from juge.arguments import refuse_text
    from juge.config import eval_config, provider_override, with_model
    from juge.runs.plan import RunOptions, plan_run
    from juge.runs.providers import answering_judges

    refuse_text("only", only, "list")
    if repeat < 1:
        raise InputError(f"--repeat {repeat}: give 1 or more")
    if limit is not None and limit < 1:
        raise InputError(f"--limit {limit}: give 1 or more")
    config = eval_config(eval_or_path, cases=cases, judges=judges, mapping=mapping)
    config.judges = with_model(config.judges, model)
    override = provider_override(provider, None, None)
    options = RunOptions(
        only=frozenset(only) if only is not None else None, limit=limit, repeat=repeat, provider_override=override
    )
    plan = plan_run(config, options, providers=False)
    planned = plan_calls(
        plan.selection, answering_judges(config, override), repeat, system=plan.generated, source=str(config.source)
    )
    planned.warnings = list(plan.warnings)
    return planned
