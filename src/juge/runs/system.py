"""The system under test: its prompt template, and the outputs it writes for a run's cases.

A run whose eval names a ``[system]`` first asks it for an ``output`` on every single-answer case
(stored, so a resumed run does not ask again), then judges those outputs.
"""

from __future__ import annotations

import hashlib
import logging
from collections.abc import Iterator, Sequence
from dataclasses import dataclass

import jinja2

from juge.config import EvalConfig
from juge.data.records import Case
from juge.engine import Engine, payer_of, run_together
from juge.errors import input_error
from juge.providers import ProviderError, Request
from juge.providers.base import Provider
from juge.store import Store

log = logging.getLogger(__name__)


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


async def generate_outputs(
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
            log.warning("system failed on %s: %s", case.id, exc)
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
