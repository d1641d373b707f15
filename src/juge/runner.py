"""`juge run`: from an eval file to a stored, summarised run.

Steps: read and sample the cases, generate outputs if the eval names a system,
run the deterministic checks, judge every (case, judge, order, repeat), summarise.
A run of the same eval file on the same data resumes the unfinished run.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import jinja2
from rich.console import Console
from rich.markup import escape

from juge import __version__
from juge.config import EvalConfig, ProviderSpec
from juge.data.readers import file_hash, read_cases, sample
from juge.data.records import Case
from juge.engine import Engine, EngineOptions, JudgeTask, apply_checks, build_tasks, summarize
from juge.errors import InputError, input_error
from juge.providers import ProviderError, Request, make_provider
from juge.providers.base import Provider
from juge.providers.pricing import price_table
from juge.store import Store


@dataclass
class RunResult:
    run_id: str
    summary: dict[str, Any]
    resumed: bool
    stored_now: int
    engine_stats: dict[str, int]


def model_family(model: str) -> str:
    """A model's family for the self-preference warning: 'gpt-4o-mini-2024-07-18' -> 'gpt'."""
    name = model.lower().rsplit("/", 1)[-1]
    return re.split(r"[-_.:\d]", name, maxsplit=1)[0] or name


def same_family_warnings(system_model: str | None, judges: Sequence[Any]) -> list[str]:
    if not system_model:
        return []
    out = []
    for j in judges:
        if j.model == system_model:
            out.append(f"judge {j.name!r} uses the same model as the system under test ({j.model}): "
                       "self-preference bias is likely; prefer a judge from another family")
        elif model_family(j.model) == model_family(system_model):
            out.append(f"judge {j.name!r} ({j.model}) is of the same family as the system under test "
                       f"({system_model}): self-preference bias is possible")
    return out


class Providers:
    """One provider instance per distinct (name, options), built lazily."""

    def __init__(self, default: ProviderSpec, base_dir: Path):
        self.default = default
        self.base_dir = base_dir
        self._made: dict[str, Provider] = {}

    def get(self, spec: ProviderSpec | dict[str, Any] | None) -> Provider:
        spec = self.default if spec is None else (spec if isinstance(spec, ProviderSpec) else ProviderSpec(**spec))
        options = dict(spec.options)
        if spec.name == "replay" and "path" in options:
            options["path"] = str((self.base_dir / options["path"]).resolve())
        key = json.dumps([spec.name, options], sort_keys=True, default=str)
        if key not in self._made:
            try:
                self._made[key] = make_provider(spec.name, **options)
            except (ProviderError, ValueError, TypeError) as exc:
                raise InputError(f"provider {spec.name!r}: {exc}") from None
        return self._made[key]


def _judge_provider_spec(judge: Any) -> ProviderSpec | None:
    p = getattr(judge, "provider", None)
    if p is None:
        return None
    if isinstance(p, str):
        return ProviderSpec(name=p, options=dict(getattr(judge, "provider_options", {}) or {}))
    return ProviderSpec(**p) if isinstance(p, dict) else p


async def _generate_outputs(config: EvalConfig, store: Store, run_id: str, cases: list[Case],
                            providers: Providers, engine: Engine) -> list[Case]:
    """Fill `output` from the system under test; stored per case so a resumed run does not regenerate."""
    system = config.spec.system
    assert system is not None
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    template_path = config.path(system.template)
    try:
        template = env.from_string(template_path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise input_error(config.source, f"system template {template_path} not found", field="system.template") from None
    provider = providers.get(system.provider)
    existing = store.outputs(run_id)
    semaphore = asyncio.Semaphore(engine.options.concurrency)

    async def one(case: Case) -> Case:
        stored = existing.get((case.id, "output"))
        if stored is not None and stored["outcome"] == "ok":
            return case.model_copy(update={"output": stored["text"]})
        messages = [m.model_dump() for m in case.conversation()[:-1]] if case.messages else []
        messages.append({"role": "user", "content": template.render(case=case)})
        request = Request(messages=tuple(messages), model=system.model, temperature=system.temperature,
                          max_tokens=system.max_tokens,
                          meta={"item_id": case.id, "judge": "system", "template": template_path.name})
        async with semaphore:
            try:
                response, _ = await engine.call(provider, request, run_id=run_id)
            except ProviderError as exc:
                store.save_output(run_id, case.id, "output", None, system.model, "error")
                engine.console.print(f"[yellow]system failed on {escape(case.id)}: {escape(str(exc))}[/]")
                return case
        outcome = "refused" if response.refused else "ok"
        store.save_output(run_id, case.id, "output", response.text, response.model, outcome)
        return case.model_copy(update={"output": response.text})

    return list(await asyncio.gather(*(one(c) for c in cases)))


def check_renderable(tasks: Sequence[JudgeTask], cases_path: Path) -> None:
    """Render every prompt once before the first call, so a case missing what a judge needs
    (an output, a reference) stops the run at the start, not half-way."""
    for t in tasks:
        if t.repeat:
            continue
        try:
            t.judge.render(t.case, order=t.order, own_solution="-" if t.judge.solve_first else None)
        except InputError as exc:
            raise InputError(f"{cases_path}: {exc}") from None


def load_run_cases(config: EvalConfig, only: set[str] | None = None) -> tuple[list[Case], str]:
    path = config.cases_path
    cases = read_cases(path, config.spec.mapping or None)
    if only is not None:
        unknown = only - {c.id for c in cases}
        if unknown:
            raise InputError(f"--only names case ids not in {path}: {', '.join(sorted(unknown)[:5])}")
        cases = [c for c in cases if c.id in only]
    if config.spec.sample is not None:
        cases = sample(cases, config.spec.sample, seed=config.spec.seed)
    return cases, file_hash(path)


def run_eval(config: EvalConfig, store: Store, *, only: set[str] | None = None, repeat: int = 1,
             concurrency: int | None = None, progress: bool = True, resume: bool = True,
             console: Console | None = None, provider_override: ProviderSpec | None = None) -> RunResult:
    console = console or Console(stderr=True)
    cases, dataset_hash = load_run_cases(config, only)
    if not cases:
        raise InputError(f"{config.cases_path}: no cases to run")
    judges = config.judges
    eng = config.spec.engine
    options = EngineOptions(concurrency=concurrency or eng.concurrency, retries=eng.retries, timeout=eng.timeout,
                            backoff=eng.backoff, max_backoff=eng.max_backoff, repeat=repeat, progress=progress,
                            prices=price_table(config.spec.prices))
    engine = Engine(store, options, console)
    for warning in same_family_warnings(config.spec.system.model if config.spec.system else None, judges):
        console.print(f"[yellow]warning:[/] {escape(warning)}")

    # The identity of a run: eval file, judge versions, the case selection and repeat count.
    selection = ",".join(sorted(c.id for c in cases)) + f"|repeat={repeat}"
    eval_hash = config.hash_with(judges) + ":" + hashlib.sha256(selection.encode()).hexdigest()[:16]
    run_id = store.find_resumable_run(eval_hash, dataset_hash) if resume else None
    resumed = run_id is not None
    if run_id is None:
        run_id = store.create_run(
            dataset_hash=dataset_hash, juge_version=__version__, cases=cases, eval_hash=eval_hash,
            name=config.spec.name,
            config={"eval_file": config.source, "repeat": repeat,
                    "judges": [{"name": j.name, "setup": j.setup, "template": j.template_id,
                                "template_hash": j.template_hash, "model": j.model} for j in judges],
                    "system": config.spec.system.model_dump() if config.spec.system else None,
                    "min_score": config.spec.gate.min_score,
                    "only": sorted(only) if only else None},
        )
    else:
        console.print(f"resuming run [bold]{run_id}[/] (same eval file, judges and data)")
        cases = store.run_cases(run_id)

    providers = Providers(provider_override or config.spec.provider, config.base_dir)
    # A provider named on the command line applies to every judge, whatever its file says.
    judge_providers = {j.name: providers.get(provider_override or _judge_provider_spec(j)) for j in judges}

    async def main() -> int:
        nonlocal cases
        if config.spec.system is not None:
            cases = await _generate_outputs(config, store, run_id, cases, providers, engine)
        apply_checks(store, run_id, cases, config.checks)
        tasks: list[JudgeTask] = build_tasks(cases, judges, repeat)
        check_renderable(tasks, config.cases_path)
        return await engine.run_tasks(run_id, tasks, judge_providers)

    stored = asyncio.run(main())
    summary = summarize(store, run_id, judges, config.spec.gate.min_score)
    summary["engine"] = dict(engine.stats)
    store.finish_run(run_id, summary)
    return RunResult(run_id=run_id, summary=summary, resumed=resumed, stored_now=stored,
                     engine_stats=dict(engine.stats))
