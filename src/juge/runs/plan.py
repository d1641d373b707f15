"""The first step of a run: from an eval file to a frozen plan, with every input read and checked.

``eval_config -> plan_run -> claim_run -> judge_run -> finish_run -> Run`` (see :mod:`juge.runs.execute`).
:func:`plan_run` reads and checks everything a run needs before anything is created or paid for: the
gate, the case selection and its hash, the judges, the system prompt (rendered for every case), every
judge prompt (rendered once per case), the providers, the engine options and the run's identity; the
warnings it finds are in the plan (and so in the run's result), never printed. The dry run reads the
same plan without making providers (no key is needed to preview).
"""

from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from juge.config import EngineSpec, EvalConfig, ProviderSpec
from juge.data.readers import archive_parts, as_text_note, case_line, file_hash, row_id_note
from juge.data.records import Case
from juge.data.selection import Selection, select_cases
from juge.engine import EngineOptions, JudgeTask, iter_tasks
from juge.engine.batching import supports_batches
from juge.engine.progress import ProgressFactory
from juge.errors import InputError, input_error
from juge.judges.judge import CaseLacksField, Judge, case_has
from juge.providers.base import Provider
from juge.providers.pricing import batch_price_table, price_table
from juge.runs.providers import Providers, judge_provider_spec, provider_for
from juge.runs.system import SystemPrompt, load_system_prompt
from juge.runs.verdicts import counted_judges

# A batch holds every request of the run at once: no bound on the calls in flight.
BATCH_IN_FLIGHT = 10**9


@dataclass(frozen=True)
class RunOptions:
    """How to run an eval, beside the eval file: what the command line and ``juge.run`` override."""

    only: frozenset[str] | None = None  # case ids to run (None: the eval's selection)
    limit: int | None = None  # the first N cases of the selection (a quick look)
    repeat: int = 1  # each judge asked N times in the same order
    concurrency: int | None = None  # calls in flight (None: the eval file's)
    progress: bool | ProgressFactory = False  # True: the default bar on stderr; a factory: your own
    resume: bool = True  # resume the unfinished run of the same eval and data
    provider_override: ProviderSpec | None = None  # a provider for every judge and the system
    wait: bool = False  # batch mode: wait until every batch has ended


@dataclass(frozen=True)
class RunPlan:
    """Everything a run of an eval will do, read and checked: nothing created, nothing called."""

    config: EvalConfig
    options: RunOptions
    selection: Selection
    dataset_hash: str
    judges: tuple[Judge, ...]  # as configured: requests carry each judge's own model
    system_prompt: SystemPrompt | None
    providers: Providers | None  # None: planned without providers (a dry run)
    judge_providers: Mapping[str, Provider]
    system_provider: Provider | None
    engine_options: EngineOptions
    batch: bool  # [engine] mode = "batch"
    n_tasks: int  # judge tasks, every repeat included
    eval_hash: str  # the run's identity: only a run with the same one is resumed
    warnings: tuple[str, ...] = field(default=())
    # The selected cases, each with its judge tasks (repeat 0) carrying the prompts the check rendered, held
    # when they fit in PREPARED_BYTES and the judged cases are the file's (no system under test): the run
    # stores, checks and judges them without reading the file again or rendering a prompt twice. None: the
    # run reads its cases back from the store, and the engine renders each prompt.
    prepared: tuple[tuple[Case, tuple[JudgeTask, ...]], ...] | None = None

    @property
    def generated(self) -> bool:
        """Whether the system under test writes the outputs that are judged."""
        return self.system_prompt is not None


def plan_run(config: EvalConfig, options: RunOptions = RunOptions(), *, providers: bool = True) -> RunPlan:
    """Read and check everything a run of `config` needs (see the module's docstring). Without
    `providers` no provider is made (nothing needs a key): the plan is what a dry run shows."""
    check_gate(config)
    judges = tuple(config.judges)
    # The prompts are checked in the read that selects the cases; with a system under test, after it: its template
    # is read after the cases file, so the file's errors come first.
    checked = SelectionCheck(config, judges, None) if config.spec.system is None else None
    selection, dataset_hash = load_run_cases(
        config, set(options.only) if options.only is not None else None, limit=options.limit, visit=checked
    )
    if not selection.count:
        raise InputError(f"{config.cases_path}: no cases to run")
    system_prompt = load_system_prompt(config)
    if checked is None:
        checked = SelectionCheck(config, judges, system_prompt)
        for line, case in selection.with_lines():
            checked(line, case)
    n_tasks, case_warnings = checked.result(selection.count)
    n_tasks *= options.repeat
    batch = config.spec.engine.mode == "batch"
    made: Providers | None = None
    judge_providers: dict[str, Provider] = {}
    system_provider: Provider | None = None
    if providers:
        made, judge_providers, system_provider = _providers(config, judges, system_prompt, options.provider_override)
        if batch:
            check_batchable(config, [*judge_providers.values(), *([system_provider] if system_provider else [])])
    if options.wait and not batch:
        raise InputError('--wait collects batches: it needs [engine] mode = "batch" in the eval file')
    return RunPlan(
        config=config,
        options=options,
        selection=selection,
        dataset_hash=dataset_hash,
        judges=judges,
        system_prompt=system_prompt,
        providers=made,
        judge_providers=judge_providers,
        system_provider=system_provider,
        engine_options=engine_options(config, concurrency=options.concurrency, progress=options.progress, batch=batch),
        batch=batch,
        n_tasks=n_tasks,
        eval_hash=run_identity(config, selection, judges, system_prompt, options),
        warnings=(*plan_warnings(config, judges, selection), *case_warnings),
        prepared=tuple(checked.prepared) if checked.prepared is not None else None,
    )


def engine_options(
    config: EvalConfig | None, *, concurrency: int | None, progress: bool | ProgressFactory, batch: bool = False
) -> EngineOptions:
    """What the eval file's [engine] and [prices] make of the engine (its defaults without an eval file):
    `concurrency` (None: the file's) calls in flight, or in batch mode every request at once, unclaimed (one
    process holds a batch run)."""
    eng = config.spec.engine if config is not None else EngineSpec()
    prices = config.spec.prices if config is not None else None
    return EngineOptions(
        concurrency=BATCH_IN_FLIGHT if batch else concurrency or eng.concurrency,
        **eng.call_options(),
        progress=progress,
        prices=batch_price_table(prices) if batch else price_table(prices),
        claims=not batch,
    )


def _providers(
    config: EvalConfig, judges: Sequence[Judge], system_prompt: SystemPrompt | None, override: ProviderSpec | None
) -> tuple[Providers, dict[str, Provider], Provider | None]:
    """The providers of a run: each judge's (the command line's applies to every judge, whatever its file
    says) and the system's."""
    made = Providers(override or config.spec.provider, config.base_dir)
    judge_providers = {
        j.name: provider_for(made, config, override, judge_provider_spec(j), i) for i, j in enumerate(judges)
    }
    system = config.spec.system
    system_provider = (
        provider_for(made, config, None, system.provider, None) if system_prompt is not None and system else None
    )
    return made, judge_providers, system_provider


def run_identity(
    config: EvalConfig,
    selection: Selection,
    judges: Sequence[Judge],
    system_prompt: SystemPrompt | None,
    options: RunOptions,
) -> str:
    """The identity of a run: eval file, judge versions, the system prompt, the case selection, the repeat
    count and who answers. Only a run with the same identity is resumed.
    (A hash of ",".join(sorted case ids) + the rest, as earlier juge wrote it, so runs still resume.)"""
    identity = selection.ids_digest.copy()
    rest = f"|repeat={options.repeat}"
    if system_prompt is not None:
        rest += f"|system={system_prompt.hash}"
    # Who answers: the command-line provider and each judge's model and call settings.
    override = options.provider_override
    rest += "|" + json.dumps(
        [
            override.model_dump() if override else None,
            [[j.name, j.model, j.provider, j.provider_options, j.temperature, j.max_tokens] for j in judges],
        ],
        sort_keys=True,
        default=str,
    )
    if config.panels:  # a panel's run is not its members' alone (without panels the identity is as before)
        rest += "|panels=" + json.dumps([[p.name, p.members, p.aggregate, p.ties] for p in config.panels])
    identity.update(rest.encode())
    return config.hash_with(list(judges)) + ":" + identity.hexdigest()[:16]


def plan_warnings(config: EvalConfig, judges: Sequence[Judge], selection: Selection | None = None) -> list[str]:
    """What a run of `config` should warn about before it starts: a judge of the system's family, a
    [gate] min_score that fails nothing without a min_pass_rate, ids made from rows, numbers read as text."""
    warnings = same_family_warnings(config.spec.system.model if config.spec.system else None, judges)
    notes = [
        row_id_note(config.cases_path, config.spec.mapping or None),
        as_text_note(config.cases_path, selection.as_text) if selection is not None else None,
    ]
    warnings += [note for note in notes if note]
    gate = config.spec.gate
    if gate.min_score is not None and gate.min_pass_rate is None and gate.min_pass_rate_lower is None:
        warnings.append(
            "[gate] min_score says which score passes a case; add min_pass_rate (or min_pass_rate_lower) to "
            "fail the run (exit 1) below a pass rate"
        )
    return warnings


def model_family(model: str) -> str:
    """A model's family for the self-preference warning: 'gpt-4o-mini-2024-07-18' -> 'gpt'."""
    name = model.lower().rsplit("/", 1)[-1]
    return re.split(r"[-_.:\d]", name, maxsplit=1)[0] or name


def same_family_warnings(system_model: str | None, judges: Sequence[Judge]) -> list[str]:
    """A warning for each judge on the system under test's model or model family."""
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


def check_gate(config: EvalConfig) -> None:
    """A pass-rate gate needs something that passes or fails a case: a check, or a judge whose verdict
    counts (PASS/FAIL; a score judge only with [gate] min_score; a pairwise verdict never)."""
    gate = config.spec.gate
    if gate.labels is not None:
        if gate.min_pass_rate_lower is None:
            raise config.error(
                "[gate] labels serve min_pass_rate_lower (the corrected pass rate's lower bound); set it too",
                "gate.labels",
            )
        if not config.path(gate.labels).is_file():
            raise config.error(f"labels file {config.path(gate.labels)} not found", "gate.labels")
    key = "min_pass_rate" if gate.min_pass_rate is not None else "min_pass_rate_lower"
    if getattr(gate, key) is None or config.checks:
        return
    if counted_judges([(j.name, j.setup) for j in config.judges], threshold=gate.min_score).counted:
        return
    raise config.error(
        "no check or counted judge gives a pass rate (score judges count only with [gate] "
        "min_score; pairwise verdicts never pass or fail a case)",
        f"gate.{key}",
    )


def load_run_cases(
    config: EvalConfig,
    only: set[str] | None = None,
    *,
    limit: int | None = None,
    visit: Callable[[int, Case], None] | None = None,
) -> tuple[Selection, str]:
    """The cases a run selects (checked, never held whole) and the cases file's hash; `visit(line, case)` is
    called on each selected case in the same read (see :func:`juge.data.selection.select_cases`)."""
    path = config.cases_path
    if not path.exists() and archive_parts(path) is None:  # an archive's member is checked as it is read
        raise config.error(f"cases file {path} not found", "cases")
    selection = select_cases(
        path,
        config.spec.mapping or None,
        only=only,
        sample=config.spec.sample,
        seed=config.spec.seed,
        limit=limit,
        visit=visit,
    )
    return selection, file_hash(path)


# The memory (bytes, estimated) a plan may hold in cases and prompts for the run to reuse (see RunPlan.prepared): a
# few thousand cases of usual size. A larger run reads its cases back from the store and renders each prompt again:
# holding them gained it nothing (bench/RESULTS.md), and its peak memory stays that of a page of cases.
PREPARED_BYTES = 12_000_000
CASE_BYTES = 1_500  # a held case's objects beside its prompts' text: the Case, its tasks, their messages


class SelectionCheck:
    """Renders every prompt of the selection, one case at a time as the cases file is read (``visit`` of
    :func:`load_run_cases`), before anything is created or paid for (outputs the system will write are
    stood in for). :meth:`result` then gives the number of judge tasks per repeat and what to warn about:
    cases without a field a judge reads (:meth:`Judge.case_fields`; none of them having it is an InputError,
    a forgotten mapping) and cases with an empty answer. The cases and the prompts rendered are kept in
    `prepared` while they fit in `keep` bytes (default PREPARED_BYTES; None once they do not, or with a system
    under test)."""

    def __init__(
        self,
        config: EvalConfig,
        judges: Sequence[Judge],
        system_prompt: SystemPrompt | None,
        *,
        keep: int | None = None,
    ):
        self.config, self.judges, self.system_prompt = config, judges, system_prompt
        self.n_tasks = 0
        self.reads = {j.name: j.case_fields() for j in judges}
        self.judged: Counter[str] = Counter()
        self.lacking: Counter[tuple[str, str]] = Counter()
        self.empty_answers = 0
        self.room = PREPARED_BYTES if keep is None else keep
        self.prepared: list[tuple[Case, tuple[JudgeTask, ...]]] | None = [] if system_prompt is None else None

    def __call__(self, line: int, case: Case) -> None:
        preview = case
        if self.system_prompt is not None:
            self.system_prompt.check_renders(self.config, [case])
            if not (case.output or case.is_pair):
                preview = case.model_copy(update={"output": "(system output)"})
        elif _empty_answer(case):
            self.empty_answers += 1
        tasks = list(iter_tasks([preview], self.judges, 1))
        rendered = [render_checked(t, self.config, line=line) for t in tasks]
        self.n_tasks += len(tasks)
        for name in {t.judge.name for t in tasks}:
            self.judged[name] += 1
            self.lacking.update((name, f) for f in self.reads[name] if not case_has(case, f))
        if self.prepared is not None:
            self.room -= CASE_BYTES + sum(len(m["content"]) for messages in rendered for m in messages or ())
            if self.room < 0:
                self.prepared = None  # too many to hold: the run renders them again
            else:
                self.prepared.append(
                    (case, tuple(JudgeTask(t.case, t.judge, t.order, t.repeat, m) for t, m in zip(tasks, rendered)))
                )

    def result(self, count: int) -> tuple[int, list[str]]:
        """The judge tasks per repeat of the `count` cases checked, and the warnings (or the InputError)."""
        config, reads, judged = self.config, self.reads, self.judged
        warnings = []
        for (name, f), n in self.lacking.items():
            why = reads[name][f]
            if n == judged[name]:
                raise input_error(
                    config.cases_path,
                    f"judge {name!r} reads the case's {f} ({why}), but no case has one: map the column that holds "
                    f"it (--map {f}=COLUMN, or [mapping] in the eval file)",
                    field=f,
                )
            warnings.append(
                f"judge {name!r} reads the case's {f} ({why}), but {n} of {judged[name]} cases have none: their "
                "prompts go without it"
            )
        if self.empty_answers:
            warnings.append(
                f"{self.empty_answers} of {count} cases have an empty answer: the judges are asked about nothing"
            )
        return self.n_tasks, warnings


def _empty_answer(case: Case) -> bool:
    """An answer given as a blank cell (a missing one stops the run when its prompt is rendered)."""
    answers = (case.output_1, case.output_2) if case.is_pair else (case.output,)
    return any(a is not None and not a.strip() for a in answers)


def check_renderable(tasks: Iterable[JudgeTask], config: EvalConfig) -> None:
    """Render every prompt once before the first call, so a case missing what a judge needs
    (an output, a reference) stops the run at the start, not half-way, naming the case's line."""
    for t in tasks:
        render_checked(t, config)


def render_checked(
    task: JudgeTask, config: EvalConfig, *, line: int | None = None
) -> tuple[dict[str, str], ...] | None:
    """:func:`check_renderable` of one task (its case read at `line`, when known): its prompt as the engine
    sends it, or None for a repeat and for a judge that solves first (its prompt holds its own solution, not
    known yet)."""
    if task.repeat:
        return None
    judge = task.judge
    try:
        messages = judge.render(task.case, order=task.order, own_solution="-" if judge.solve_first else None)
    except CaseLacksField as exc:  # the path only now: resolving it costs file-system calls, and this runs per case
        if line is None:
            line = case_line(config.cases_path, exc.case_id, config.spec.mapping or None)
        raise input_error(config.cases_path, exc.detail or str(exc), line=line, field=exc.field) from None
    except InputError as exc:
        raise InputError(f"{config.cases_path}: {exc}") from None
    return None if judge.solve_first else tuple(messages)


def check_batchable(config: EvalConfig, providers: Sequence[Provider]) -> None:
    """Batch mode needs a provider with a batch API (openai, anthropic) for every call of the run."""
    for provider in providers:
        if not supports_batches(provider):
            raise config.error(
                f'mode = "batch" needs a provider with a batch API (openai, anthropic); {provider.name} has none',
                "engine.mode",
            )
