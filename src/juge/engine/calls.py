"""The async runner: bounded concurrency, retries with backoff, a response cache, resume.

Every attempt is logged to the store's `calls` table; every judgment is committed
as soon as it exists (with the others of the same event-loop turn: group commit, see
`juge.store`), and a judge call holds its concurrency slot until then, so a run killed
at any point (even SIGKILL) loses at most the calls in flight, resumes where it
stopped, and the store's unique key keeps each judgment exactly once.

The cache key is (provider, model, rendered messages, parameters), plus the repeat
index when a judge is asked several times for self-consistency, so a re-run of the
same eval makes zero calls while repeats stay independent samples.
"""

from __future__ import annotations

import asyncio
import hashlib
import inspect
import json
import random
import time
from collections import Counter
from collections.abc import Coroutine, Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from itertools import islice
from typing import TYPE_CHECKING, Any, NamedTuple, TypeVar

from rich.console import Console

from juge.checks import Check, run_checks
from juge.data.records import Case, Judgment
from juge.engine.batching import BatchedProvider
from juge.engine.limits import Adaptive, Budget, Clock, Spend
from juge.engine.loop import frozen_heap
from juge.engine.progress import ProgressFactory, run_progress
from juge.providers.base import Provider, ProviderClosed, ProviderError, Request, Response, Unreachable
from juge.providers.pricing import call_cost
from juge.store import Store

if TYPE_CHECKING:
    from juge.judges.judge import Judge

T = TypeVar("T")
CLAIM_PAGE = 32  # tasks claimed at once in a store shared by processes (one round trip)
SHARED_POLL = 0.2  # seconds between looks at tasks another process sharing the run is judging
# Failed connections in a row, before any call reached the server, after which a run stops (Unreachable):
# a wrong base URL or a server not started fails in seconds, not after every call's retries (issue 30).
UNREACHABLE_STOP = 3
# After this many answers of a judge, most of them unparsed (or cut at max_tokens) is said at once, with one
# raw answer and the likely fix: a run that will measure nothing should not run for twenty minutes first.
EARLY_LOOK = 10


@dataclass
class EngineOptions:
    concurrency: int = 8
    retries: int = 4
    timeout: float = 120.0
    backoff: float = 1.0
    max_backoff: float = 60.0
    progress: bool | ProgressFactory = True  # True: the bar on `Engine.console`; a factory: the caller's
    prices: dict[str, tuple[float, float]] = field(default_factory=dict)
    seed: int | None = None  # jitter seed, for reproducible tests
    # Claim each task in a store that processes share (PostgreSQL). Off in batch mode, where one
    # process holds the run and every task is in flight at once (a claim each would be a lock each).
    claims: bool = True
    # Rate budgets (see juge.engine.limits): requests and tokens per minute for each provider (endpoint),
    # and in `limits` per provider name or model name (rpm, tpm; None: no limit).
    rpm: int | None = None
    tpm: int | None = None
    limits: dict[str, tuple[int | None, int | None]] = field(default_factory=dict)
    time_scale: float = 1.0  # simulated seconds per real second (tests and benchmarks only)


@dataclass(frozen=True)
class JudgeTask:
    case: Case
    judge: Judge
    order: str | None
    repeat: int
    # The verdict prompt, when whoever made the task rendered it already (a run's plan checks every prompt):
    # sent as it is instead of rendered again. Not part of the task's identity.
    messages: tuple[dict[str, str], ...] | None = field(default=None, compare=False, repr=False)

    @property
    def key(self) -> tuple[str, str, str, int]:
        return (self.case.id, self.judge.name, self.order or "", self.repeat)


class Answer(NamedTuple):
    response: Response
    latency: float
    attempts: int  # provider calls it took; 0 when it came from the cache


def _total(values: Iterable[float | None]) -> float | None:
    """The sum, or None when any part is unknown."""
    values = list(values)
    return None if any(v is None for v in values) else sum(values)  # type: ignore[arg-type]


# What json.dumps(sort_keys=True, ensure_ascii=False) builds on every call: the same bytes, one encoder. The cache
# key stays on json (not orjson): a key's bytes must never change, or every earlier cache would miss.
_KEY_JSON = json.JSONEncoder(sort_keys=True, ensure_ascii=False)


def cache_key(provider: str, request: Request, repeat: int = 0) -> str:
    payload = [provider, request.model, list(request.messages), request.cache_params(), repeat]
    return hashlib.sha256(_KEY_JSON.encode(payload).encode()).hexdigest()


def _response_to_dict(r: Response) -> dict[str, Any]:
    return {
        "text": r.text,
        "model": r.model,
        "tokens_in": r.tokens_in,
        "tokens_out": r.tokens_out,
        "refused": r.refused,
        "refusal_reason": r.refusal_reason,
        "distribution": r.distribution,
        "truncated": r.truncated,
    }


def _response_from_dict(d: Any) -> Response | None:
    """The cached Response, or None for an entry that is not one (cached before answers were checked):
    such an entry is a miss, asked again, not a crash of every run that reads it."""
    try:
        return Response(**d)
    except TypeError:
        return None


class Engine:
    """Calls providers for a run: cache, retries with exponential backoff and jitter, call log."""

    def __init__(self, store: Store, options: EngineOptions | None = None, console: Console | None = None):
        self.store = store
        self.options = options or EngineOptions()
        self.console = console or Console(stderr=True)
        self.rng = random.Random(self.options.seed)
        self.stats: Counter[str] = Counter()
        self._paid_before: dict[str | None, dict[tuple[str, str | None], tuple[int, float | None]]] = {}
        self._next_commit: asyncio.Future[None] | None = None
        self.clock = Clock(self.options.time_scale)
        self._adaptive: dict[str, Adaptive] = {}
        self._budgets: dict[str, Budget | None] = {}
        self._reached: set[int] = set()  # providers (by id) a call has reached: a reply, even an error status
        self._unreachable: Counter[int] = Counter()  # failed connections in a row before that
        self._first_answers: dict[str, list[Judgment]] = {}  # each judge's first EARLY_LOOK answers
        self.notes: list[str] = []  # what the run noticed on the way (also told to the progress, if it listens)

    async def call(
        self, provider: Provider, request: Request, *, run_id: str | None, repeat: int = 0, payer: str | None = None
    ) -> Answer:
        """One answer for `request`: from the cache, or from the provider with bounded retries.

        Returns the response, its latency in seconds and the number of attempts it took (0 for
        a cache hit). Raises ProviderError when every attempt failed or the error is not retryable.
        `payer` names what the answer is for (see `payer_of`); it is logged with each attempt.
        """
        key = cache_key(provider.cache_identity, request, repeat)
        cacheable = provider.cacheable
        paid_before = self._paid_by_earlier_processes(run_id)
        cached = self.store.cache_get(key) if cacheable else None
        cached_response = _response_from_dict(cached) if cached is not None else None
        if cached_response is not None:
            self.stats["cache_hits"] += 1
            # A resumed run whose killed process bought this answer, but died before storing what it
            # was for, still paid for it: that call's attempts and latency, not a free cache hit. Only
            # what it was bought for pays (another task sharing the answer gets it free); a call logged
            # without a payer, by an earlier juge, is paid by whichever asks first.
            paid = paid_before.pop((key, payer), None) or paid_before.pop((key, None), None)
            attempts, latency = paid or (0, 0.0)
            return Answer(cached_response, latency or 0.0, attempts)
        opts = self.options
        request_log = {
            "messages": list(request.messages),
            "model": request.model,
            **request.cache_params(),
            "meta": request.meta,
        }
        deferred = isinstance(provider, BatchedProvider)
        for attempt in range(opts.retries + 1):
            started = time.perf_counter()
            gate, spends = (None, []) if deferred else await self._admit(provider, request, retry=attempt > 0)
            try:
                if deferred:  # batch mode: answered when its batch ends
                    assert isinstance(provider, BatchedProvider)
                    response = await provider.complete_keyed(request, key)
                else:
                    async with asyncio.timeout(opts.timeout):
                        response = await provider.complete(request)
            except BaseException as exc:
                if gate is not None:
                    throttled = isinstance(exc, ProviderError) and exc.status == 429
                    for budget, spend in spends:
                        if throttled:
                            budget.refund(spend)
                    retry_after = exc.retry_after if isinstance(exc, ProviderError) else None
                    gate.release(throttled=throttled, retry_after=retry_after)
                if isinstance(exc, ProviderClosed):  # the run is shutting down: not this call's failure
                    raise
                if not isinstance(exc, Exception):
                    raise
                # a provider's bug or a malformed reply fails this call, not the run
                latency = time.perf_counter() - started
                if isinstance(exc, ProviderError):
                    err = exc
                elif isinstance(exc, asyncio.TimeoutError):
                    err = ProviderError(f"no answer within {opts.timeout:g} s", retryable=True)
                else:
                    err = ProviderError(f"provider {provider.name} failed: {type(exc).__name__}: {exc}")
                self.stats["failed_attempts"] += 1
                stop = self._count_unreachable(provider, err)
                self.store.log_call(
                    run_id=run_id,
                    cache_key=key,
                    provider=provider.name,
                    model=request.model,
                    attempt=attempt,
                    request=request_log,
                    response=None,
                    error=str(err),
                    status=err.status,
                    latency=latency,
                    payer=payer,
                )
                self.commit_soon()
                if stop is not None:
                    raise stop from err
                if not err.retryable or attempt == opts.retries:
                    err.attempts = attempt + 1
                    raise err  # noqa: B904 (may wrap a timeout)
                delay = min(opts.max_backoff, opts.backoff * 2**attempt) * (0.5 + self.rng.random())
                if err.retry_after is not None:  # the server said how long to wait (Retry-After), up to max_backoff
                    delay = max(delay, min(err.retry_after, opts.max_backoff))
                self.stats["retries"] += 1
                await self.clock.sleep(delay)
                continue
            latency = time.perf_counter() - started
            self._reached.add(id(provider))
            if gate is not None:
                for budget, spend in spends:
                    budget.settle(spend, request, response.tokens_in, response.tokens_out)
                gate.release(throttled=False, latency=latency * self.clock.scale)
            self.stats["calls"] += 1
            self.store.log_call(
                run_id=run_id,
                cache_key=key,
                provider=provider.name,
                model=request.model,
                attempt=attempt,
                request=request_log,
                response=_response_to_dict(response),
                error=None,
                status=None,
                latency=latency,
                payer=payer,
                cache=cacheable,
            )
            self.commit_soon()
            return Answer(response, latency, attempt + 1)
        raise AssertionError("unreachable")

    async def _admit(
        self, provider: Provider, request: Request, *, retry: bool = False
    ) -> tuple[Adaptive, list[tuple[Budget, Spend]]]:
        """A slot of the provider's adaptive concurrency, then room in its budgets (its own and its
        model's); returns the gate to release and the spends to settle."""
        ident = provider.cache_identity
        gate = self._adaptive.get(ident)
        if gate is None:
            gate = self._adaptive[ident] = Adaptive(self.options.concurrency, self.clock)
        await gate.acquire(retry=retry)
        spends = []
        try:
            for name, scope in ((provider.name, ident), (request.model, f"{ident}\x1f{request.model}")):
                budget = self._budget(scope, name, model=scope != ident)
                if budget is not None:
                    spends.append((budget, await budget.admit(request)))
        except BaseException:
            gate.release(throttled=False)
            raise
        return gate, spends

    def _budget(self, scope: str, name: str, *, model: bool) -> Budget | None:
        """The budget of a provider (`[engine] rpm/tpm`, or `limits[provider name]`) or of one of its
        models (`limits[model]`), made on first use; None when nothing limits it."""
        if scope not in self._budgets:
            opts = self.options
            rpm, tpm = opts.limits.get(name, (None, None) if model else (opts.rpm, opts.tpm))
            self._budgets[scope] = Budget(rpm, tpm, self.clock) if rpm or tpm else None
        return self._budgets[scope]

    def commit_soon(self) -> asyncio.Future[None]:
        """A future done once every write made so far is committed: one commit per event-loop turn
        for all the calls and judgments that finished in it. A no-op commit outside `store.grouped()`."""
        if self._next_commit is None:
            loop = asyncio.get_running_loop()
            self._next_commit = loop.create_future()
            loop.call_soon(self._commit)
        return self._next_commit

    def _commit(self) -> None:
        done, self._next_commit = self._next_commit, None
        assert done is not None
        try:
            self.store.commit()
        except BaseException as exc:  # every task waiting on this commit fails with its error
            done.set_exception(exc)
            done.exception()  # nobody may be waiting (a call's own commit): do not warn "never retrieved"
        else:
            done.set_result(None)

    def _paid_by_earlier_processes(self, run_id: str | None) -> dict[tuple[str, str | None], tuple[int, float | None]]:
        """This run's answered calls made before this engine's first call for it (by a process that
        was killed), read once so the calls this engine makes are never among them."""
        if run_id is None:
            return {}
        if run_id not in self._paid_before:
            self._paid_before[run_id] = self.store.unsettled_calls(run_id)
        return self._paid_before[run_id]

    async def judge_one(self, run_id: str, task: JudgeTask, provider: Provider) -> Judgment:
        judge, case = task.judge, task.case
        meta = {
            "item_id": case.id,
            "judge": judge.name,
            "template": judge.template_id,
            "order": task.order,
            "repeat": task.repeat,
        }
        base: dict[str, Any] = dict(
            item_id=case.id,
            judge=judge.name,
            template=judge.template_id,
            template_hash=judge.template_hash,
            order=task.order,
            repeat=task.repeat,
            run_id=run_id,
        )
        answers: list[Answer] = []  # the solve-first call, if any, then the verdict call
        payer = payer_of(*task.key)
        try:
            own_solution = None
            if judge.solve_first:
                solve = Request(
                    messages=tuple(judge.render_solve(case)),
                    model=judge.model,
                    temperature=judge.temperature,
                    max_tokens=judge.max_tokens,
                    meta={**meta, "template": judge.template_id + "/solve", "order": None},
                )
                answers.append(await self.call(provider, solve, run_id=run_id, payer=payer))
                own_solution = answers[-1].response.text
            messages = task.messages if task.messages is not None and own_solution is None else None
            request = Request(
                messages=messages or tuple(judge.render(case, order=task.order, own_solution=own_solution)),
                model=judge.model,
                temperature=judge.temperature,
                max_tokens=judge.max_tokens,
                json_schema=judge.json_schema() if judge.structured else None,
                allowed=judge.allowed() if judge.constrained else None,
                meta=meta,
            )
            answers.append(await self.call(provider, request, run_id=run_id, repeat=task.repeat, payer=payer))
        except ProviderError as exc:
            return Judgment(
                **base,
                model=provider.answering_model(judge.model),
                text="",
                outcome="error",
                reason=str(exc),
                attempts=getattr(exc, "attempts", None),
            )
        try:
            return self._judgment_of(judge, base, answers)
        except Exception as exc:  # fail closed: an answer that makes no judgment fails this task, not the run
            response, _, attempts = answers[-1]
            return Judgment(
                **base,
                model=provider.answering_model(judge.model),
                text=response.text,
                outcome="error",
                attempts=attempts,
                reason=f"no judgment could be made of the answer: {type(exc).__name__}: {exc}",
            )

    def _judgment_of(self, judge: Any, base: dict[str, Any], answers: list[Answer]) -> Judgment:
        """The judgment the last answer gives, with the tokens, cost and latency of all of `answers`."""
        response, _, attempts = answers[-1]
        # A solve-first judgment costs both calls; an unknown part makes the total unknown.
        common: dict[str, Any] = dict(
            base,
            model=response.model,
            text=response.text,
            tokens_in=_total(a.response.tokens_in for a in answers),
            tokens_out=_total(a.response.tokens_out for a in answers),
            cost=_total(self.cost_of(a.response, a.attempts) for a in answers),
            latency=sum(a.latency for a in answers),
            distribution=response.distribution,
            attempts=attempts,
        )
        if response.refused:
            return Judgment(**common, outcome="refused", reason=response.refusal_reason)
        parsed = judge.parse(response.text)
        if response.truncated:
            # Fail closed: a cut answer may have lost the words that reverse its verdict ("... Answer: FAIL").
            why = f"; {parsed.reason}" if parsed.outcome == "unparsed" and parsed.reason else ""
            cut = f"cut: the answer was cut at max_tokens ({judge.max_tokens}){why}"
            return Judgment(**common, outcome="unparsed", reason=cut)
        return Judgment(**common, outcome=parsed.outcome, verdict=parsed.verdict, reason=parsed.reason)

    def cost_of(self, response: Response, attempts: int) -> float | None:
        """What producing `response` cost this run: nothing when it came from the cache."""
        if attempts == 0:
            return 0.0
        return call_cost(response.model, response.tokens_in, response.tokens_out, self.options.prices)

    def _count_unreachable(self, provider: Provider, err: ProviderError) -> Unreachable | None:
        """The error that stops the run when `provider` was never reached and this is the UNREACHABLE_STOP-th
        failed connection in a row; any reply (an answer, or an error status) means the server is there."""
        if not err.unreachable:
            if err.status is not None:
                self._reached.add(id(provider))
            return None
        if id(provider) in self._reached:
            return None
        self._unreachable[id(provider)] += 1
        if self._unreachable[id(provider)] < UNREACHABLE_STOP:
            return None
        return Unreachable(
            f"{provider.name}: {err}; {UNREACHABLE_STOP} calls in a row could not connect and none has reached the "
            "server: check the base URL (or that the server is running), then run the same command again to resume"
        )

    def _early_look(self, judgment: Judgment) -> str | None:
        """At a judge's EARLY_LOOK-th answer (errors aside): a note when more than half gave no verdict, with
        one raw answer and the likely fix."""
        if judgment.outcome == "error":
            return None
        first = self._first_answers.setdefault(judgment.judge, [])
        if len(first) >= EARLY_LOOK:
            return None
        first.append(judgment)
        if len(first) < EARLY_LOOK:
            return None
        unparsed = [j for j in first if j.outcome == "unparsed"]
        if len(unparsed) * 2 <= len(first):
            return None
        cut = sum(1 for j in unparsed if (j.reason or "").startswith("cut"))
        if cut * 2 > len(unparsed):
            fix = "raise the judge's max_tokens, or ask for a shorter answer (constrained = true on a local model)"
        else:
            fix = "constrained = true (a local model), a larger max_tokens, or a stronger model"
        sample = unparsed[0]
        raw = sample.text if len(sample.text) <= 200 else sample.text[:200] + " …"
        return (
            f"judge {judgment.judge!r}: {len(unparsed)} of its first {len(first)} answers gave no verdict"
            + (f" ({cut} cut at max_tokens)" if cut else "")
            + f"; one of them: {raw!r} ({sample.reason}). Likely fix: {fix}"
        )

    async def run_tasks(
        self,
        run_id: str,
        tasks: Iterable[JudgeTask],
        providers: dict[str, Provider],
        description: str = "judging",
        *,
        total: int | None = None,
    ) -> int:
        """Judge every task not already stored for this run; returns how many were stored now.

        `tasks` may be a generator (a large run's tasks are never held whole): it is read a page
        at a time as workers free up, and `total` (the number of tasks, for the progress bar) is
        then given by the caller."""
        pending: Iterable[JudgeTask]
        if total is None:
            tasks = list(tasks)
            total = len(tasks)
            # these tasks' own stored judgments: a run judged in parts (tune's folds) holds others too
            pending = list(self._not_done(run_id, tasks))
            completed = total - len(pending)
        else:  # a whole run's tasks, streamed: what the run has stored is what this call skips
            pending = self._not_done(run_id, tasks)
            completed = min(total, self.store.count_judgments(run_id))
        stored = 0
        shown = self.options.progress
        progress = (
            shown(description, total, completed)
            if callable(shown)
            else run_progress(self.console, description, total, completed, enabled=shown)
        )
        # The optional parts of a progress (see juge.engine.progress): a progress written before them still works.
        listener: Any = progress
        takes_unparsed = "unparsed" in inspect.signature(progress.advance).parameters
        with progress:
            elsewhere: list[JudgeTask] = []  # being judged by another process sharing the run

            def claimed(tasks: Iterable[JudgeTask]) -> Iterator[JudgeTask]:
                """The tasks this process judges: in a store shared by processes, those it claims (a
                few at a time); one stored meanwhile is skipped, one being judged elsewhere waits."""
                if not self.options.claims:
                    yield from tasks
                    return
                it = iter(tasks)
                while chunk := list(islice(it, CLAIM_PAGE)):
                    got = self.store.claim_many(run_id, [t.key for t in chunk])
                    for task in chunk:
                        state = True if got is None else got[task.key]
                        if state:
                            yield task
                        elif state is False:
                            elsewhere.append(task)
                        else:
                            progress.advance()

            queue: Iterator[JudgeTask] = claimed(pending)

            async def worker() -> None:
                """Judges the next task until none is left. A task is in flight until its judgment is
                committed, so `concurrency` workers keep a kill's loss to the calls in flight."""
                nonlocal stored
                for task in queue:
                    judgment = await self.judge_one(run_id, task, providers[task.judge.name])
                    stored += self.store.save_judgment(run_id, judgment)
                    # Shielded: a worker cancelled while waiting must not cancel the commit the others wait on.
                    await asyncio.shield(self.commit_soon())
                    self.store.release(run_id, task.key)
                    if takes_unparsed:
                        listener.advance(error=judgment.outcome == "error", unparsed=judgment.outcome == "unparsed")
                    else:  # a caller's progress from before the keyword
                        progress.advance(error=judgment.outcome == "error")
                    if (note := self._early_look(judgment)) is not None:
                        self.notes.append(note)
                        if callable(getattr(listener, "note", None)):
                            listener.note(note)

            with self.store.grouped(), frozen_heap():
                workers = max(1, min(self.options.concurrency, total))
                while True:
                    await run_together(worker() for _ in range(workers))
                    if not elsewhere:
                        break
                    # Other processes are judging these: wait for them (a killed one's come back to us),
                    # having let go of ours (they may be waiting for them too).
                    self.store.commit()
                    await asyncio.sleep(SHARED_POLL)
                    workers = min(self.options.concurrency, len(elsewhere))
                    queue = claimed(elsewhere)
                    elsewhere = []
        return stored

    def _not_done(self, run_id: str, tasks: Iterable[JudgeTask], page: int = 256) -> Iterator[JudgeTask]:
        """The tasks whose judgment is not stored yet, looked up a page of tasks at a time."""
        it = iter(tasks)
        while chunk := list(islice(it, page)):
            done = self.store.done_keys_of(run_id, {t.case.id for t in chunk})
            yield from (t for t in chunk if t.key not in done)


def payer_of(*parts: str | int) -> str:
    """What a call is made for, as logged with it: a judgment's (item, judge, order, repeat), or
    (item, output slot) for the system under test. A resumed run charges an answer a killed
    process bought only to what it was bought for, not to every task that shares it."""
    return "\x1f".join(map(str, parts))


async def run_together(coroutines: Iterable[Coroutine[Any, Any, T]]) -> list[T]:
    """The results of `coroutines` run concurrently; the first to raise cancels the others.

    Unlike asyncio.gather, no sibling runs on after a failure (into providers its caller is
    about to close), and the first error is raised as itself, not inside an ExceptionGroup,
    so the caller's handlers (an InputError's exit code 2) still apply.
    """
    try:
        async with asyncio.TaskGroup() as group:
            tasks = [group.create_task(c) for c in coroutines]
    except BaseExceptionGroup as failed:
        raise failed.exceptions[0] from None
    return [t.result() for t in tasks]


def build_tasks(cases: Iterable[Case], judges: Sequence[Judge], repeat: int = 1) -> list[JudgeTask]:
    """One task per (case, judge, order, repeat). Pair judges skip single cases and vice versa."""
    return list(iter_tasks(cases, judges, repeat))


def iter_tasks(cases: Iterable[Case], judges: Sequence[Judge], repeat: int = 1) -> Iterator[JudgeTask]:
    """`build_tasks`, one task at a time."""
    for case in cases:
        for judge in judges:
            if (judge.setup == "pairwise") != case.is_pair:
                continue
            for order in judge.orders(case):
                for r in range(repeat):
                    yield JudgeTask(case=case, judge=judge, order=order, repeat=r)


def check_outputs(case: Case) -> dict[str, str]:
    """The outputs the checks read: `output`, or both answers of a pair (suffixed [1] and [2])."""
    if case.is_pair:
        return {"[1]": case.output_1 or "", "[2]": case.output_2 or ""}
    return {"": case.output or ""}


def apply_checks(store: Store, run_id: str, cases: Iterable[Case], checks: Sequence[Check], page: int = 500) -> None:
    """Run the checks on every case and store their results, a page of cases per transaction."""
    if not checks:
        return
    it = iter(cases)
    while chunk := list(islice(it, page)):
        rows = []
        for case in chunk:
            results = {}
            for suffix, output in check_outputs(case).items():
                for name, r in run_checks(list(checks), case, output).items():
                    results[name + suffix] = (r.passed, r.reason)
            rows.append((case.id, results))
        store.save_checks_of(run_id, rows)
