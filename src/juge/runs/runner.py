"""`juge run`: from an eval file to a stored, summarised run.

Steps: read and sample the cases, generate outputs if the eval names a system,
run the deterministic checks, judge every (case, judge, order, repeat), summarise.
A run of the same eval file on the same data resumes the unfinished run.
"""

from __future__ import annotations

import asyncio
import dataclasses
import fcntl
import hashlib
import json
import re
from collections.abc import Awaitable, Callable, Iterable, Iterator, Sequence
from contextlib import AbstractContextManager, contextmanager, nullcontext
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import jinja2
from rich.console import Console
from rich.markup import escape

from juge import __version__
from juge.batching import BatchedProvider, BatchPending, describe, supports_batches
from juge.config import EvalConfig, ProviderSpec
from juge.data.readers import case_line, file_hash
from juge.data.records import Case, Judgment
from juge.data.selection import Selection, select_cases
from juge.engine import (
    Engine,
    EngineOptions,
    JudgeTask,
    apply_checks,
    build_tasks,
    iter_tasks,
    payer_of,
    run_together,
)
from juge.errors import InputError, input_error
from juge.judges.judge import CaseLacksField
from juge.providers import ProviderError, Request, make_provider
from juge.providers.base import Provider
from juge.providers.pricing import batch_price_table, price_table
from juge.providers.registry import answering_model
from juge.results import Gate, RunSummary
from juge.runs.summary import summarize
from juge.store import Store
from juge.runs.verdicts import counted_judges


@dataclass
class RunResult:
    run_id: str
    summary: RunSummary | None  # None while batches are pending
    resumed: bool
    stored_now: int
    engine_stats: dict[str, int]
    # Batch mode: the batches still being answered (id, state, counts); the run is unfinished then.
    pending: list[dict[str, Any]] | None = None
    first_error: str | None = None  # set when no judgment could be made: every call failed
    warnings: list[str] = field(default_factory=list)
    reused: bool = False  # answered wholly from the cache and identical to run_id, an earlier run: no new run kept


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
            out.append(
                f"judge {j.name!r} uses the same model as the system under test ({j.model}): "
                "self-preference bias is likely; prefer a judge from another family"
            )
        elif model_family(j.model) == model_family(system_model):
            out.append(
                f"judge {j.name!r} ({j.model}) is of the same family as the system under test "
                f"({system_model}): self-preference bias is possible"
            )
    return out


class Providers:
    """One provider instance per distinct (name, options), built lazily."""

    def __init__(self, default: ProviderSpec | None, base_dir: Path):
        self.default = default
        self.base_dir = base_dir
        self._made: dict[str, Provider] = {}

    def get(self, spec: ProviderSpec | dict[str, Any] | None) -> Provider:
        spec = self.default if spec is None else (spec if isinstance(spec, ProviderSpec) else ProviderSpec(**spec))
        if spec is None:
            raise InputError(
                'no provider configured: name one in the judge file (provider = "openai"), in the eval '
                "file ([provider] name = ...), or with --provider"
            )
        # A judge or system naming the eval's provider without options of its own uses the eval's
        # options (its base_url above all): never silently fall back to a provider's default endpoint.
        same = self.default is not None and spec.name == self.default.name
        options = dict(spec.options or (self.default.options if same and self.default else {}))
        if spec.name == "replay" and "path" in options:
            options["path"] = str((self.base_dir / options["path"]).resolve())
        key = json.dumps([spec.name, options], sort_keys=True, default=str)
        if key not in self._made:
            try:
                provider = make_provider(spec.name, **options)
                # The cache must tell apart two configurations of one provider (another scripted
                # rule, another endpoint): its key carries a hash of the options.
                provider.cache_identity = f"{provider.name}#{hashlib.sha256(key.encode()).hexdigest()[:12]}"
                self._made[key] = provider
            except TypeError as exc:
                raise InputError(f"provider {spec.name!r}: {exc} (check the option names)") from None
            except (ProviderError, ValueError) as exc:
                raise InputError(f"provider {spec.name!r}: {exc}") from None
        return self._made[key]

    async def aclose(self) -> None:
        """Close the providers that hold connections: they belong to the event loop that used them."""
        for provider in self._made.values():
            await provider.aclose()


def _provider(
    providers: Providers, config: EvalConfig, override: ProviderSpec | None, own: ProviderSpec | None, judge: int | None
) -> Provider:
    """The provider that answers: the command line's, else judge `judge`'s (None: the system's) own,
    else the eval's.

    A bad one is an error naming the file and field that chose it (the command line's names itself).
    """
    if override is not None:
        return providers.get(override)
    try:
        return providers.get(own)
    except InputError as exc:
        if own is None:
            raise config.error(str(exc), "provider.name") from None
        if judge is None:
            raise config.error(str(exc), "system.provider") from None
        raise config.judge_error(judge, str(exc), "provider") from None


def answering_judges(config: EvalConfig, override: ProviderSpec | None = None) -> list[Any]:
    """The eval's judges with the model that answers for each (the provider that answers may answer as
    its own model, as the eval's scripted stand-in does): what a run records and a preview shows. The
    requests still carry each judge's own model."""
    out = []
    for judge in config.judges:
        spec = override or _judge_provider_spec(judge) or config.spec.provider
        model = answering_model(spec.name, spec.options, judge.model) if spec is not None else judge.model
        out.append(_as_model(judge, model))
    return out


def _as_model(judge: Any, model: str) -> Any:
    """`judge` recorded as answered by `model` (itself when that is its own model)."""
    return judge if model == judge.model else dataclasses.replace(judge, model=model)


def _judge_provider_spec(judge: Any) -> ProviderSpec | None:
    p = getattr(judge, "provider", None)
    if p is None:
        return None
    if isinstance(p, str):
        return ProviderSpec(name=p, options=dict(getattr(judge, "provider_options", {}) or {}))
    return ProviderSpec(**p) if isinstance(p, dict) else p


@dataclass(frozen=True)
class SystemPrompt:
    """The system under test's prompt template: its text is part of the run's identity."""

    name: str
    template: jinja2.Template
    hash: str

    def check_renders(self, config: EvalConfig, cases: Sequence[Case]) -> None:
        """Render the prompt for every case before anything is created or paid for."""
        for case in cases:
            try:
                self.messages(case)
            except jinja2.TemplateError as exc:
                raise config.error(
                    f"system template {self.name} does not render for case {case.id!r}: {exc}", "system.template"
                ) from None

    def messages(self, case: Case) -> list[dict[str, str]]:
        """The conversation before the answer under test, its last user turn rendered by the template.

        Template variables: `case` (the whole Case) and `input` (the last user turn of a
        multi-turn case, else the question).
        """
        turns = case.conversation()
        last = turns[-1].content if turns and turns[-1].role == "user" else (case.question or "")
        history = [m.model_dump() for m in turns[:-1]] if case.messages else []
        return history + [{"role": "user", "content": self.template.render(case=case, input=last)}]


def load_system_prompt(config: EvalConfig) -> SystemPrompt | None:
    system = config.spec.system
    if system is None:
        return None
    path = config.path(system.template)
    try:
        source = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise input_error(config.source, f"system template {path} not found", field="system.template") from None
    env = jinja2.Environment(undefined=jinja2.StrictUndefined, autoescape=False, keep_trailing_newline=True)
    try:
        template = env.from_string(source)
    except jinja2.TemplateSyntaxError as exc:
        raise input_error(path, f"template syntax error: {exc.message}", line=exc.lineno) from None
    return SystemPrompt(path.name, template, hashlib.sha256(source.encode()).hexdigest()[:12])


async def _generate_outputs(
    config: EvalConfig,
    prompt: SystemPrompt,
    store: Store,
    run_id: str,
    provider: Provider,
    engine: Engine,
    *,
    workers: int,
) -> None:
    """Store an `output` from the system under test for every single-answer case of the run that
    has none yet, so a resumed run does not regenerate. Pair cases are left as they are: their two
    answers are what the pairwise judges compare. Cases are read from the store a page at a time.

    A case whose system call failed (or was blocked with no text) keeps no output: it gets no
    checks and no judge calls, counts as missing, and is tried again when the run resumes.
    A refusal with text is the output under test and is judged like any other.
    """
    system = config.spec.system
    assert system is not None

    def todo() -> Iterator[Case]:
        for page in store.iter_run_cases(run_id):
            singles = [c for c in page if not c.is_pair]  # a pair already carries the two answers under comparison
            existing = store.outputs(run_id, [c.id for c in singles])
            for case in singles:
                stored = existing.get((case.id, "output"))
                if stored is None or stored["outcome"] not in ("ok", "refused") or not stored["text"]:
                    yield case

    async def one(case: Case) -> None:
        request = Request(
            messages=tuple(prompt.messages(case)),
            model=system.model,
            temperature=system.temperature,
            max_tokens=system.max_tokens,
            meta={"item_id": case.id, "judge": "system", "template": prompt.name},
        )
        try:
            response, latency, attempts = await engine.call(
                provider, request, run_id=run_id, payer=payer_of(case.id, "output")
            )
        except ProviderError as exc:  # never judge an answer the system did not give
            store.save_output(run_id, case.id, "output", None, system.model, "error", reason=str(exc))
            engine.console.print(f"[yellow]system failed on {escape(case.id)}: {escape(str(exc))}[/]")
            return
        cost = engine.cost_of(response, attempts)
        outcome = "refused" if response.refused else "ok"
        store.save_output(
            run_id,
            case.id,
            "output",
            response.text,
            response.model,
            outcome,
            reason=response.refusal_reason,
            tokens_in=response.tokens_in,
            tokens_out=response.tokens_out,
            cost=cost,
            latency=latency,
        )

    queue = todo()

    async def worker() -> None:
        for case in queue:
            await one(case)

    await run_together(worker() for _ in range(max(1, workers)))


def judged_cases(store: Store, run_id: str, *, generated: bool) -> Iterator[Case]:
    """The run's cases as judged, a page at a time from the store: with `generated` (the eval has a
    system under test) each single-answer case carries its stored output, and one without a usable
    output (its system call failed) is left out."""
    for page in store.iter_run_cases(run_id):
        if not generated:
            yield from page
            continue
        outputs = store.outputs(run_id, [c.id for c in page if not c.is_pair])
        for case in page:
            if case.is_pair:
                yield case
                continue
            stored = outputs.get((case.id, "output"))
            if stored is not None and stored["outcome"] in ("ok", "refused") and stored["text"]:
                yield case.model_copy(update={"output": stored["text"]})


def check_renderable(tasks: Iterable[JudgeTask], config: EvalConfig) -> None:
    """Render every prompt once before the first call, so a case missing what a judge needs
    (an output, a reference) stops the run at the start, not half-way, naming the case's line."""
    cases_path = config.cases_path
    for t in tasks:
        if t.repeat:
            continue
        try:
            t.judge.render(t.case, order=t.order, own_solution="-" if t.judge.solve_first else None)
        except CaseLacksField as exc:
            line = case_line(cases_path, exc.case_id, config.spec.mapping or None)
            raise input_error(cases_path, exc.detail or str(exc), line=line, field=exc.field) from None
        except InputError as exc:
            raise InputError(f"{cases_path}: {exc}") from None


def check_gate(config: EvalConfig) -> None:
    """A pass-rate gate needs something that passes or fails a case: a check, or a judge whose verdict
    counts (PASS/FAIL; a score judge only with [gate] min_score; a pairwise verdict never)."""
    gate = config.spec.gate
    if gate.min_pass_rate is None or config.checks:
        return
    if counted_judges([(j.name, j.setup) for j in config.judges], threshold=gate.min_score).counted:
        return
    raise config.error(
        "no check or counted judge gives a pass rate (score judges count only with [gate] "
        "min_score; pairwise verdicts never pass or fail a case)",
        "gate.min_pass_rate",
    )


def gate_of(config: EvalConfig, summary: RunSummary | None) -> Gate | None:
    """The eval's [gate] min_pass_rate on a finished run; a gate no figure can meet is an input error."""
    minimum = config.spec.gate.min_pass_rate
    if minimum is None or summary is None:
        return None
    if summary.pass_rate is None:
        raise config.error(
            "no check or counted judge gives a pass rate (score judges count only with [gate] min_score)",
            "gate.min_pass_rate",
        )
    return Gate(min_pass_rate=minimum, pass_rate=summary.pass_rate, passed=summary.pass_rate >= minimum)


def load_run_cases(config: EvalConfig, only: set[str] | None = None) -> tuple[Selection, str]:
    """The cases a run selects (checked, never held whole) and the cases file's hash."""
    path = config.cases_path
    if not path.exists():
        raise config.error(f"cases file {path} not found", "cases")
    selection = select_cases(
        path, config.spec.mapping or None, only=only, sample=config.spec.sample, seed=config.spec.seed
    )
    return selection, file_hash(path)


def _check_selection(
    config: EvalConfig, selection: Selection, judges: Sequence[Any], system_prompt: SystemPrompt | None
) -> int:
    """Render every prompt of the selection before anything is created or paid for (outputs the system
    will write are stood in for); returns the number of judge tasks per repeat."""
    n_tasks = 0
    for case in selection:
        preview = case
        if system_prompt is not None:
            system_prompt.check_renders(config, [case])
            if not (case.output or case.is_pair):
                preview = case.model_copy(update={"output": "(system output)"})
        tasks = list(iter_tasks([preview], judges, 1))
        check_renderable(tasks, config)
        n_tasks += len(tasks)
    return n_tasks


def run_eval(
    config: EvalConfig,
    store: Store,
    *,
    only: set[str] | None = None,
    repeat: int = 1,
    concurrency: int | None = None,
    progress: bool = True,
    resume: bool = True,
    console: Console | None = None,
    provider_override: ProviderSpec | None = None,
    wait: bool = False,
) -> RunResult:
    """Run an eval to the end in a new event loop (see :func:`run_eval_async`)."""
    return asyncio.run(
        run_eval_async(
            config,
            store,
            only=only,
            repeat=repeat,
            concurrency=concurrency,
            progress=progress,
            resume=resume,
            console=console,
            provider_override=provider_override,
            wait=wait,
        )
    )


async def run_eval_async(
    config: EvalConfig,
    store: Store | Callable[[], Store],
    *,
    only: set[str] | None = None,
    repeat: int = 1,
    concurrency: int | None = None,
    progress: bool = True,
    resume: bool = True,
    console: Console | None = None,
    provider_override: ProviderSpec | None = None,
    wait: bool = False,
) -> RunResult:
    """Judge the eval into `store` in the running event loop: the checks first, then every judge on every
    case (pairs in both orders); an unfinished run of the same eval is resumed when `resume`. In batch mode
    (``[engine] mode = "batch"``) requests go to the provider's batch API; `wait` polls until every batch
    has ended, else a run whose batches are still out returns with `pending` set and stays unfinished (a
    later call collects it). `store` may be a function that opens it: it is called once every input has been
    read and checked, so bad input never creates an empty store."""
    console = console or Console(stderr=True)
    check_gate(config)
    selection, dataset_hash = load_run_cases(config, only)
    if not selection.count:
        raise InputError(f"{config.cases_path}: no cases to run")
    judges = config.judges
    system_prompt = load_system_prompt(config)
    n_tasks = _check_selection(config, selection, judges, system_prompt) * repeat
    providers = Providers(provider_override or config.spec.provider, config.base_dir)
    # A provider named on the command line applies to every judge, whatever its file says.
    judge_providers = {
        j.name: _provider(providers, config, provider_override, _judge_provider_spec(j), i)
        for i, j in enumerate(judges)
    }
    system_provider = (
        _provider(providers, config, None, config.spec.system.provider, None)
        if system_prompt is not None and config.spec.system
        else None
    )

    eng = config.spec.engine
    batch = eng.mode == "batch"
    if batch:
        check_batchable(config, [*judge_providers.values(), *([system_provider] if system_provider else [])])
    elif wait:
        raise InputError('--wait collects batches: it needs [engine] mode = "batch" in the eval file')
    options = EngineOptions(
        # A batch holds every request of the run at once: no bound on the calls in flight.
        concurrency=BATCH_IN_FLIGHT if batch else concurrency or eng.concurrency,
        **eng.call_options(),
        progress=progress,
        prices=batch_price_table(config.spec.prices) if batch else price_table(config.spec.prices),
        claims=not batch,
    )
    if callable(store):
        store = store()
    engine = Engine(store, options, console)
    for warning in same_family_warnings(config.spec.system.model if config.spec.system else None, judges):
        console.print(f"[yellow]warning:[/] {escape(warning)}")
    if config.spec.gate.min_score is not None and config.spec.gate.min_pass_rate is None:
        console.print(
            "[yellow]note:[/] [gate] min_score says which score passes a case; add min_pass_rate "
            "to fail the run (exit 1) below a pass rate",
            markup=True,
            highlight=False,
        )

    # The identity of a run: eval file, judge versions, the system prompt, the case selection
    # and the repeat count. Only a run with the same identity is resumed.
    # (A hash of ",".join(sorted case ids) + the rest, as earlier juge wrote it, so runs still resume.)
    identity = selection.ids_digest.copy()
    rest = f"|repeat={repeat}"
    if system_prompt is not None:
        rest += f"|system={system_prompt.hash}"
    # Who answers: the command-line provider and each judge's model and call settings.
    rest += "|" + json.dumps(
        [
            provider_override.model_dump() if provider_override else None,
            [[j.name, j.model, j.provider, j.provider_options, j.temperature, j.max_tokens] for j in judges],
        ],
        sort_keys=True,
        default=str,
    )
    identity.update(rest.encode())
    eval_hash = config.hash_with(judges) + ":" + identity.hexdigest()[:16]

    def new_run() -> str:
        return store.create_run(
            dataset_hash=dataset_hash,
            juge_version=__version__,
            cases=selection,
            eval_hash=eval_hash,
            name=config.spec.name,
            config={
                "eval_file": config.source,
                "repeat": repeat,
                "judges": judges_config(answering_judges(config, provider_override)),
                "system": (config.spec.system.model_dump() | {"template_hash": system_prompt.hash})
                if config.spec.system and system_prompt
                else None,
                "min_score": config.spec.gate.min_score,
                "only": sorted(only) if only else None,
            },
        )

    stored = 0
    try:
        with stored_run(
            store,
            engine,
            judges,
            eval_hash=eval_hash,
            dataset_hash=dataset_hash,
            resume=resume,
            create=new_run,
            min_score=config.spec.gate.min_score,
            alone=batch,
        ) as run:
            run_id = run.id
            if run.resumed:
                console.print(f"resuming run [bold]{run_id}[/] (same eval file, judges, system prompt and data)")
            generated = system_prompt is not None

            async def main() -> int:
                nonlocal stored
                batched: dict[int, BatchedProvider] = {}

                def answering(provider: Provider) -> Provider:
                    """The provider itself, or in batch mode its one batch runner for this run."""
                    if not batch:
                        return provider
                    if id(provider) not in batched:
                        batched[id(provider)] = BatchedProvider(
                            provider, store, run_id, wait=wait, poll=eng.batch_poll, max_requests=eng.batch_size
                        )
                    return batched[id(provider)]

                try:
                    if system_prompt is not None:
                        assert system_provider is not None
                        await _generate_outputs(
                            config,
                            system_prompt,
                            store,
                            run_id,
                            answering(system_provider),
                            engine,
                            workers=min(engine.options.concurrency, selection.count),
                        )
                        # the system's outputs are new; without them the check was of stand-ins
                        check_renderable(iter_tasks(judged_cases(store, run_id, generated=True), judges, 1), config)
                    apply_checks(store, run_id, judged_cases(store, run_id, generated=generated), config.checks)
                    return await engine.run_tasks(
                        run_id,
                        iter_tasks(judged_cases(store, run_id, generated=generated), judges, repeat),
                        {name: answering(p) for name, p in judge_providers.items()},
                        total=n_tasks,
                    )
                finally:
                    for runner in batched.values():
                        await runner.aclose()
                    await providers.aclose()

            stored_before = store.count_judgments(run_id) if batch else 0
            stored = await main()
    except BatchPending as pending:  # the run stays unfinished: a later run collects the batches
        return RunResult(
            run_id=run_id,
            summary=None,
            resumed=run.resumed,
            stored_now=store.count_judgments(run_id) - stored_before,
            engine_stats=dict(engine.stats),
            pending=describe(pending.statuses),
        )
    summary_dict = run.summary.to_dict() if run.summary is not None else {}
    first_error = nothing_made(store, run_id, summary_dict)
    warnings = unparsed_warnings(store, run_id, summary_dict)
    summary, reused = run.summary, False
    if resume and not run.resumed and engine.stats.get("calls", 0) == 0 and engine.stats.get("cache_hits", 0):
        from juge.runs.reuse import reuse_earlier_run

        earlier = reuse_earlier_run(store, run_id)
        if earlier is not None:
            run_id, reused = earlier, True
            summary = summary.model_copy(update={"run_id": earlier}) if summary is not None else None
    return RunResult(
        run_id=run_id,
        summary=summary,
        resumed=run.resumed,
        stored_now=stored,
        engine_stats=dict(engine.stats),
        first_error=first_error,
        warnings=warnings,
        reused=reused,
    )


BATCH_IN_FLIGHT = 10**9


def check_batchable(config: EvalConfig, providers: Sequence[Provider]) -> None:
    """Batch mode needs a provider with a batch API (openai, anthropic) for every call of the run."""
    for provider in providers:
        if not supports_batches(provider):
            raise config.error(
                f'mode = "batch" needs a provider with a batch API (openai, anthropic); {provider.name} has none',
                "engine.mode",
            )


UNPARSED_WARNING = 0.2  # a judge with more unparsed answers than this share probably has a format problem


def nothing_made(store: Store, run_id: str, summary: dict[str, Any]) -> str | None:
    """The first error when no judgment could be made (every judge call failed, or the system under
    test failed on every case, so nothing was judged); None when anything was measured."""
    judges = summary.get("judges") or {}
    made = sum(j["outcomes"][k] for j in judges.values() for k in ("ok", "refused", "unparsed"))
    errors = sum(j["outcomes"]["error"] for j in judges.values())
    system_errors = summary.get("system_errors") or 0
    if made or not (errors or system_errors):
        return None
    for j in store.judgments(run_id):
        if j.outcome == "error":
            return f"judge {j.judge} on case {j.item_id}: {j.reason or 'no reason recorded'}"
    for (item_id, _), out in sorted(store.outputs(run_id).items()):
        if out["outcome"] == "error":
            return f"the system under test on case {item_id}: {out['reason'] or 'no reason recorded'}"
    return "every call failed"


def unparsed_warnings(store: Store, run_id: str, summary: dict[str, Any]) -> list[str]:
    """One warning per judge with more than UNPARSED_WARNING of its answers unparsed, quoting one raw answer."""
    noisy = {
        name
        for name, j in (summary.get("judges") or {}).items()
        if (n := sum(j["outcomes"].values())) and j["outcomes"]["unparsed"] / n > UNPARSED_WARNING
    }
    if not noisy:
        return []
    example: dict[str, Judgment] = {}
    for j in store.judgments(run_id):
        if j.judge in noisy and j.outcome == "unparsed":
            example.setdefault(j.judge, j)
    warnings = []
    for name in sorted(noisy):
        outcomes = summary["judges"][name]["outcomes"]
        shown = example.get(name)
        raw = (shown.text[:300] + ("..." if len(shown.text) > 300 else "")) if shown else ""
        warnings.append(
            f"judge {name}: {outcomes['unparsed']} of {sum(outcomes.values())} answers unparsed "
            f"(more than {UNPARSED_WARNING:.0%}); check the judge's format or model. "
            f"One raw answer ({shown.reason if shown else '?'}): {raw!r}"
        )
    return warnings


@dataclass
class StoredRun:
    """A run being judged. `extra` joins its summary when it is finished; `summary` is set then."""

    id: str
    resumed: bool
    extra: dict[str, Any] = field(default_factory=dict)
    summary: RunSummary | None = None


@contextmanager
def stored_run(
    store: Store,
    engine: Engine,
    judges: Sequence[Any],
    *,
    eval_hash: str,
    dataset_hash: str,
    resume: bool,
    create: Callable[[], str],
    min_score: float | None = None,
    alone: bool = False,
) -> Iterator[StoredRun]:
    """The run an eval judges, under its lock: the unfinished run of the same eval and data (when
    `resume`), else a new one from `create()`. When the block ends without an error the run is
    summarised (`summarize`, the engine's counters, then `extra`) and finished; after an error
    (an interrupt) it stays unfinished, to be resumed."""
    # A shared store (PostgreSQL) lets several processes judge one run, unless the run is to be `alone`
    # (batch mode); on SQLite a second process is always refused.
    lock: AbstractContextManager[Any] = nullcontext()
    if not store.shares_runs:
        lock = run_lock(Path(store.path), eval_hash)
    elif alone:
        lock = store.exclusive(eval_hash)  # type: ignore[attr-defined]
    with lock:
        with store.joining(eval_hash):
            found = store.find_resumable_run(eval_hash, dataset_hash) if resume else None
            run = StoredRun(found or create(), resumed=found is not None)
        yield run
        summary = summarize(store, run.id, judges, min_score)
        run.summary = summary.model_copy(update={"engine": dict(engine.stats), **run.extra})
        store.finish_run(run.id, run.summary.to_dict())


def judges_config(judges: Iterable[Any]) -> list[dict[str, Any]]:
    """What a run's config records of each judge: its name, setup, template (id and hash) and model."""
    return [
        {
            "name": j.name,
            "setup": j.setup,
            "template": j.template_id,
            "template_hash": j.template_hash,
            "model": j.model,
        }
        for j in judges
    ]


@contextmanager
def judged_run(
    store: Store,
    engine: Engine,
    judges: Sequence[Any],
    cases: Sequence[Case],
    *,
    provider: Provider,
    eval_hash: str,
    dataset_hash: str,
    name: str,
    config: dict[str, Any],
    resume: bool = True,
    description: str = "judging",
    work: Callable[[str], Awaitable[None]] | None = None,
) -> Iterator[StoredRun]:
    """A stored run judged by one provider outside `juge run` (tuning, a tuned judge's holdout test, a
    probe): the unfinished run of the same eval and data (when `resume`), else a new one holding `cases`,
    `name` and `config` with :func:`judges_config` (each judge with the model `provider` answers as).
    `work(run_id)` judges it (by default every case by every judge), then `provider` is closed before
    its event loop ends, whether judging ended or not.
    The block reads the judged run and may add to its `extra`; it is then summarised and finished
    (see :func:`stored_run`)."""

    def create() -> str:
        return store.create_run(
            dataset_hash=dataset_hash,
            juge_version=__version__,
            cases=list(cases),
            eval_hash=eval_hash,
            name=name,
            config={**config, "judges": judges_config(_as_model(j, provider.answering_model(j.model)) for j in judges)},
        )

    async def judge_all(run_id: str) -> None:
        try:
            if work is not None:
                await work(run_id)
            else:
                tasks = build_tasks(cases, judges)
                await engine.run_tasks(run_id, tasks, {j.name: provider for j in judges}, description=description)
        finally:
            await provider.aclose()

    with stored_run(
        store, engine, judges, eval_hash=eval_hash, dataset_hash=dataset_hash, resume=resume, create=create
    ) as run:
        asyncio.run(judge_all(run.id))
        yield run


def run_lock_path(db_path: Path, eval_hash: str) -> Path:
    """The file a `juge run` of this eval locks beside a SQLite store."""
    return db_path.parent / f".run-{hashlib.sha256(eval_hash.encode()).hexdigest()[:16]}.lock"


@contextmanager
def run_lock(db_path: Path, eval_hash: str) -> Iterator[None]:
    """One process at a time on one eval's run: a second `juge run` would pay for the same calls.

    An OS file lock, so a killed process (even SIGKILL) releases it and the run can resume.
    """
    lock_path = run_lock_path(db_path, eval_hash)
    with open(lock_path, "a+") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise InputError(
                f"another juge run is working on this eval right now (lock {lock_path}); "
                "wait for it to finish, then run again to resume or reuse its answers"
            ) from None
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)
