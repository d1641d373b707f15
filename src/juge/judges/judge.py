"""A judge: rubric + template + strict parser, versioned by the hash of all three.

Load one from TOML with `load_judge` (or `judge_from_dict` for a table inside an
eval file)::

    name = "helpful"
    setup = "score"            # passfail | score | criteria | additive | pairwise
    model = "gpt-4o-mini"      # provider = "openai"; temperature = 0; max_tokens = 1024
    marker = "Total rating:"   # score/additive: the last line's marker
    scale = [1, 4]             # score: optional, must match the levels
    reference = false          # the case's reference answer goes into the prompt
    solve_first = false        # the judge solves the question first, then grades
    structured = false         # ask for a JSON schema; the strict parser still decides
    template = "my.j2"         # optional: a Jinja2 file (or a built-in id); default: built-in

    [rubric]                   # or: rubric = "rubrics/helpful.toml"
    description = "Does the answer solve the user's problem?"
    levels = { 1 = "Not at all", 2 = "Partly", 3 = "Mostly", 4 = "Fully" }

`items` (additive), `criteria` (criteria) and `examples` (few-shot) go in the
rubric too, or at the top level of the judge file.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

import jinja2
import jinja2.meta
from pydantic import ConfigDict, Field, StrictBool, ValidationError, field_validator

from juge.data.records import Case
from juge.errors import InputError, input_error, validation_error, with_toml_line
from juge.judges.parsers import PARSERS, ParseResult, ok, parse_structured, unparsed
from juge.judges.render import (
    builtin_templates,
    case_blocks,
    example_data,
    neutralise,
    render_blocks,
    schema_text,
    wrap,
)
from juge.judges.rubric import Rubric, read_toml, rubric_from_dict
from juge.parts import Documented
from juge.visible import visible_name

Setup = Literal["passfail", "score", "criteria", "additive", "pairwise"]
SETUPS: tuple[str, ...] = ("passfail", "score", "criteria", "additive", "pairwise")
RENDER_VERSION = 2  # bump when the wrapping of data (render.py) changes what a template produces
_DEFAULT_MARKER = {"score": "NOTE:", "additive": "Total:"}


@dataclass(frozen=True, eq=False)
class Judge:
    """A configured judge. `template_hash` (12 hex) is its version: it changes with the rubric,
    the template source, the parser config or the prompt options, and with nothing else."""

    name: str
    setup: Setup
    rubric: Rubric
    template_id: str
    template_source: str
    parser_config: dict[str, Any] = field(default_factory=dict)
    reference: bool = False
    solve_first: bool = False
    structured: bool = False
    constrained: bool = False
    solve_source: str | None = None
    provider: str | dict[str, Any] | None = None
    provider_options: dict[str, Any] = field(default_factory=dict)
    model: str = ""
    temperature: float = 0.0
    max_tokens: int = 1024
    template_hash: str = field(init=False)

    def __post_init__(self) -> None:
        payload = {
            "render": RENDER_VERSION,
            "setup": self.setup,
            "rubric": self.rubric.model_dump(mode="json"),
            "template": self.template_source,
            "solve": self.solve_source if self.solve_first else None,
            "parser": self.parser_config,
            "reference": self.reference,
            "structured": self.structured,
            "constrained": self.constrained,
        }
        digest = hashlib.sha256(json.dumps(payload, sort_keys=True, ensure_ascii=False).encode("utf-8"))
        object.__setattr__(self, "template_hash", digest.hexdigest()[:12])

    # --- what to ask -------------------------------------------------------------

    def case_fields(self) -> dict[str, str]:
        """The optional case fields this judge reads (question, context, source), each with why: its rubric
        names the block (``<context>``) or its own template uses the variable. A run warns when cases lack
        one (their prompts go without it) and stops when every case does (a forgotten ``--map``). The
        built-in templates show each block only when the case has it, so they alone name nothing."""
        rubric = json.dumps(self.rubric.model_dump(mode="json", exclude={"examples"}), ensure_ascii=False)
        found = {name: f"its rubric names <{name}>" for name in CASE_TEXT_FIELDS if f"<{name}>" in rubric}
        if self.template_source not in builtin_templates().values():
            used = jinja2.meta.find_undeclared_variables(jinja2.Environment().parse(self.template_source))
            for name in CASE_TEXT_FIELDS:
                if name in used:
                    found.setdefault(name, f"its template uses {name}")
        return found

    def orders(self, case: Case) -> list[str | None]:
        """The orders to judge a case in: both for pairs (``12``, ``21``), else one."""
        return ["12", "21"] if self.setup == "pairwise" else [None]

    def _variables(self) -> dict[str, Any]:
        config = self.parser_config
        criteria = [
            {"name": name, "description": c.description, "lo": lo, "hi": hi, "levels": c.levels}
            for (name, c), (lo, hi) in zip(
                (self.rubric.criteria or {}).items(), (config.get("criteria") or {}).values()
            )
        ]
        return {
            "judge_name": self.name,
            "setup": self.setup,
            "rubric": self.rubric,
            # An example's answer may carry a person's note (juge tune's few-shot): untrusted, neutralised like case text.
            "examples": [
                {"data": example_data(ex), "judgment": neutralise(ex.judgment)} for ex in self.rubric.examples
            ],
            "structured": self.structured,
            "constrained": self.constrained,
            "json_schema": schema_text(self.json_schema()) if self.structured else "",
            "lo": config.get("lo"),
            "hi": config.get("hi"),
            "marker": config.get("marker"),
            "rescale_from": config.get("rescale_from"),
            "n_items": config.get("n_items"),
            "criteria": criteria,
        }

    def render(self, case: Case, order: str | None = None, own_solution: str | None = None) -> list[dict[str, str]]:
        """Chat messages (system, user) asking this judge about `case`, shown in `order` for pairs."""
        blocks = case_blocks(case)
        if self.setup == "pairwise":
            if order not in ("12", "21"):
                raise ValueError(f"judge {self.name!r} is pairwise: order must be '12' or '21', not {order!r}")
            _require(case, self.name, "output_1", "output_2")
            first, second = (case.output_1, case.output_2) if order == "12" else (case.output_2, case.output_1)
            blocks |= {
                "response": "",
                "response_a": wrap("response_a", first),
                "response_b": wrap("response_b", second),
            }
        else:
            if order is not None:
                raise ValueError(f"judge {self.name!r} grades single answers: order must be None")
            _require(case, self.name, "output")
            blocks |= {"response": wrap("response", case.output), "response_a": "", "response_b": ""}
        if self.reference:
            _require(case, self.name, "reference")
        if self.solve_first and own_solution is None:
            raise ValueError(f"judge {self.name!r} solves first: pass its own solution (render_solve)")
        blocks |= {
            "reference": wrap("reference", case.reference) if self.reference else "",
            "own_solution": wrap("own_solution", own_solution) if self.solve_first else "",
        }
        return render_blocks(self.template_source, self._variables() | blocks).messages()

    def render_solve(self, case: Case) -> list[dict[str, str]]:
        """Messages asking the judge to answer the question itself (solve-first judges only)."""
        if not self.solve_first or self.solve_source is None:
            raise ValueError(f"judge {self.name!r} does not solve first")
        return render_blocks(self.solve_source, self._variables() | case_blocks(case)).messages()

    # --- how to read the answer -----------------------------------------------------

    def parse(self, text: str) -> ParseResult:
        """The strict parser of this judge's setup (structured answers are validated by it too)."""
        if self.structured:
            return parse_structured(text, self.setup, self.parser_config)
        if self.constrained:
            return self._parse_constrained(text)
        return PARSERS[self.setup](text, **self.parser_config)

    def _parse_constrained(self, text: str) -> ParseResult:
        """A constrained answer is exactly one of `allowed()`: the provider scored those strings
        (log-probabilities) or the model was asked for nothing else. Anything else is unparsed."""
        allowed = self.allowed() or ()
        if text not in allowed:
            return unparsed("not_allowed", f"expected exactly one of {', '.join(allowed)}")
        return ok(int(text) if self.setup in ("score", "additive") else text)

    def allowed(self) -> tuple[str, ...] | None:
        """Verdict strings for constrained (log-probability) verdicts, or None when not applicable."""
        config = self.parser_config
        if self.setup == "passfail":
            return ("PASS", "FAIL")
        if self.setup == "pairwise":
            return ("A", "B", "C")
        if self.setup == "score" and config.get("rescale_from") is None:
            return tuple(str(n) for n in range(config["lo"], config["hi"] + 1))
        if self.setup == "additive":
            return tuple(str(n) for n in range(0, config["n_items"] + 1))
        return None

    def json_schema(self) -> dict[str, Any]:
        """The JSON schema of a structured answer; `parse` checks answers against the same rules."""
        config = self.parser_config
        text = {"type": "string"}
        if self.setup == "passfail":
            props: dict[str, Any] = {"verdict": {"type": "string", "enum": ["PASS", "FAIL"]}, "reason": text}
        elif self.setup == "pairwise":
            props = {"reasoning": text, "verdict": {"type": "string", "enum": ["A", "B", "C"]}}
        elif self.setup == "criteria":
            scores = {
                name: {"type": "integer", "minimum": lo, "maximum": hi} for name, (lo, hi) in config["criteria"].items()
            }
            props = {
                "reasoning": text,
                "scores": {
                    "type": "object",
                    "properties": scores,
                    "required": list(scores),
                    "additionalProperties": False,
                },
            }
        elif self.setup == "additive":
            props = {"reasoning": text, "total": {"type": "integer", "minimum": 0, "maximum": config["n_items"]}}
        elif config.get("rescale_from") is not None:
            a, b = config["rescale_from"]
            props = {"reasoning": text, "score": {"type": "number", "minimum": a, "maximum": b}}
        else:
            props = {"reasoning": text, "score": {"type": "integer", "minimum": config["lo"], "maximum": config["hi"]}}
        return {"type": "object", "properties": props, "required": list(props), "additionalProperties": False}


class CaseLacksField(InputError):
    """A case lacks a field a judge needs; whoever read the cases file names it and the case's line."""

    def __init__(self, case_id: str, field: str, judge: str):
        super().__init__(f"case {case_id!r}: field '{field}': judge {judge!r} needs it but the case has none")
        self.case_id, self.field = case_id, field
        self.detail = f"case {case_id!r}: judge {judge!r} needs it but the case has none"


# The case's text blocks a rubric or template may rely on (the answers and the reference are required anyway).
CASE_TEXT_FIELDS = ("question", "context", "source")


def case_has(case: Case, name: str) -> bool:
    """Whether `case` has a non-blank `name` (a conversation stands for the question)."""
    if name == "question" and case.messages:
        return True
    value = getattr(case, name)
    return isinstance(value, str) and bool(value.strip())


def _require(case: Case, judge: str, *fields: str) -> None:
    for name in fields:
        if getattr(case, name) is None:
            raise CaseLacksField(case.id, name, judge)


# --- loading -------------------------------------------------------------------------


class JudgeSpec(Documented):
    """The keys of a judge file (unknown keys are errors, so typos are caught)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1)
    """The judge's name, unique in the eval (`juge show --judge`, policies and reports name it)."""

    @field_validator("name")
    @classmethod
    def _visible_name(cls, name: str) -> str:
        return visible_name(name)

    setup: Setup
    """passfail, score, criteria, additive or pairwise: the answer format the strict parser reads."""
    rubric: str | dict[str, Any] | None = None
    """The rubric: a table of the rubric keys, or a rubric file (TOML) relative to the judge file."""
    description: str | None = None
    """What the judge decides (the rubric's description, when the rubric keys are at the top level)."""
    levels: dict[str | int, str] | None = None
    """score: the described levels, `{ 1 = "...", 2 = "..." }` (consecutive integers)."""
    items: list[str] | None = None
    """additive: the items, one point each."""
    criteria: dict[str, Any] | None = None
    """criteria: each criterion's description (and levels), graded in one answer as a JSON object."""
    examples: list[dict[str, Any]] | None = None
    """Worked examples (few-shot): the data shown and the exact answer the judge should give."""
    template: str | None = None
    """A Jinja2 template file, or a built-in template id (default: the setup's built-in)."""
    solve_template: str | None = None
    """solve_first: the template of the judge's own solution (default: the built-in)."""
    scale: tuple[int, int] | None = None
    """score and criteria: the scale as [low, high]; it must match the levels."""
    marker: str | None = Field(default=None, min_length=1)
    """score and additive: the marker of the last line, e.g. `Total rating:` (default `NOTE:`)."""
    rescale_from: tuple[float, float] | None = None
    """score: a judge that answers on another scale (e.g. [0, 10] floats), rescaled onto `scale`."""
    # Strict: TOML has true/false, so a string ("yes", "false") or a number is a mistake, never read as true.
    extra_keys: StrictBool = False
    """criteria: accept keys beyond the criteria in the JSON answer."""
    require_reason: StrictBool = True
    """The answer must explain its verdict (a verdict alone is unparsed)."""
    reference: StrictBool = False
    """The case's reference answer goes into the prompt (the `-ref` templates)."""
    solve_first: StrictBool = False
    """The judge writes its own solution first, then grades with it (two calls)."""
    structured: StrictBool = False
    """Ask for a JSON object following the setup's schema (response_format); the strict parser still decides."""
    constrained: StrictBool = False
    """The verdict is the likeliest of the allowed answers (a provider that scores log-probabilities, e.g.
    llamacpp)."""
    provider: str | dict[str, Any] | None = None
    """The judge's provider (a name, or a table with name and options), when it is not the eval's."""
    provider_options: dict[str, Any] = Field(default_factory=dict)
    """Options of the judge's provider (scripted answers, base_url, ...)."""
    model: str = ""
    """The model asked; the model version that answers is recorded with every call."""
    temperature: float = Field(default=0.0, ge=0.0)
    """Sampling temperature (0: as repeatable as the provider allows)."""
    max_tokens: int = Field(default=1024, gt=0)
    """The longest answer, in tokens; an answer cut at it is unparsed (reason `cut`)."""
    # Provenance written by `juge tune` (parent judge, variant, example ids): not part of the version.
    tuned: dict[str, Any] | None = None
    """Written by `juge tune`: the parent judge, the variant and the example ids (not part of the version)."""


_RUBRIC_KEYS = ("description", "levels", "items", "criteria", "examples")
_USES = {
    "levels": {"score"},
    "items": {"additive"},
    "criteria": {"criteria"},
    "marker": {"score", "additive"},
    "scale": {"score", "criteria"},
    "rescale_from": {"score"},
    "extra_keys": {"criteria"},
}


def _rubric(spec: JudgeSpec, base_dir: Path, source: str) -> Rubric:
    inline = {k: getattr(spec, k) for k in _RUBRIC_KEYS if getattr(spec, k) is not None}
    if isinstance(spec.rubric, str):
        path = base_dir / spec.rubric
        data, where = read_toml(path), str(path)
    else:
        data, where = dict(spec.rubric or {}), source
    for key in inline:
        if key in data:
            raise input_error(source, "given both in the rubric and at the top level", field=key)
    data = {"name": spec.name} | data | inline
    return rubric_from_dict(data, where, prefix="rubric" if where == source and spec.rubric is not None else "")


def _parser_config(spec: JudgeSpec, rubric: Rubric, source: str) -> dict[str, Any]:
    for key, setups in _USES.items():
        used = getattr(rubric, key, None) if key in ("levels", "items", "criteria") else getattr(spec, key)
        if used not in (None, False) and spec.setup not in setups:
            raise input_error(source, f"not used by a {spec.setup} judge (only {', '.join(sorted(setups))})", field=key)
    if spec.setup == "passfail":
        return {"require_reason": spec.require_reason}
    if spec.setup == "pairwise":
        return {}
    reasoning = {"require_reasoning": spec.require_reason}
    marker = spec.marker or _DEFAULT_MARKER.get(spec.setup)
    if marker is not None and (marker != marker.strip() or "\n" in marker):
        raise input_error(source, "must not start or end with spaces or hold a line break", field="marker")
    if spec.setup == "additive":
        if not rubric.items:
            raise input_error(source, "an additive judge needs a list of items", field="items")
        return {"n_items": len(rubric.items), "marker": marker} | reasoning
    if spec.scale is not None and not spec.scale[0] < spec.scale[1]:
        raise input_error(source, f"must be [low, high] with low < high, got {list(spec.scale)}", field="scale")
    if spec.setup == "score":
        if not rubric.levels:
            raise input_error(source, "a score judge needs described levels", field="levels")
        lo, hi = min(rubric.levels), max(rubric.levels)
        if lo == hi:
            raise input_error(source, "a score judge needs at least two levels", field="levels")
        if spec.scale is not None and tuple(spec.scale) != (lo, hi):
            raise input_error(source, f"scale {list(spec.scale)} does not match the levels {lo}-{hi}", field="scale")
        rescale = None
        if spec.rescale_from is not None:
            if not spec.rescale_from[0] < spec.rescale_from[1]:
                raise input_error(source, "must be [low, high] with low < high", field="rescale_from")
            rescale = list(spec.rescale_from)
        return {"lo": lo, "hi": hi, "marker": marker, "rescale_from": rescale} | reasoning
    if not rubric.criteria:
        raise input_error(source, "a criteria judge needs at least one criterion", field="criteria")
    ranges: dict[str, list[int]] = {}
    for name, criterion in rubric.criteria.items():
        if criterion.levels:
            ranges[name] = [min(criterion.levels), max(criterion.levels)]
        elif spec.scale is not None:
            ranges[name] = list(spec.scale)
        else:
            raise input_error(source, "needs levels, or set a scale for all criteria", field=f"criteria.{name}")
    return {"criteria": ranges, "extra_keys": spec.extra_keys} | reasoning


def _template(value: str | None, default_id: str, base_dir: Path, source: str, key: str) -> tuple[str, str, str]:
    """(template id, source text, where) for a template key: a file, a built-in id, or the default."""
    builtins = builtin_templates()
    if value is None:
        return default_id, builtins[default_id], f"built-in template {default_id}"
    path = base_dir / value
    if path.is_file():
        try:
            return path.stem.removesuffix(".j2"), path.read_text(encoding="utf-8"), str(path)
        except UnicodeDecodeError:
            raise input_error(path, "not UTF-8 text") from None
    if value in builtins:
        return value, builtins[value], f"built-in template {value}"
    raise input_error(
        source,
        f"no template file {path} and no built-in template {value!r} (built-ins: {', '.join(builtins)})",
        field=key,
    )


def _sample_case() -> Case:
    return Case(
        id="sample", question="Q?", context="C", source="S", reference="R", output="O", output_1="O1", output_2="O2"
    )


def _check_renders(render: Callable[[Case], Any], where: str, key: str, source: str) -> None:
    """Render once with a sample case so a broken template fails at load, naming its file."""
    try:
        render(_sample_case())
    except jinja2.TemplateSyntaxError as exc:
        raise input_error(where, f"template syntax error: {exc.message}", line=exc.lineno) from None
    except (jinja2.TemplateError, ValueError, TypeError) as exc:
        raise input_error(source, f"template {where} does not render: {exc}", field=key) from None


def judge_from_dict(data: Mapping[str, Any], base_dir: str | Path = ".", source: str = "<judge>") -> Judge:
    """Build a judge from a TOML table; every error is an InputError naming `source` and the field."""
    base_dir = Path(base_dir)
    try:
        spec = JudgeSpec.model_validate(dict(data))
    except ValidationError as exc:
        raise validation_error(source, exc, known=JudgeSpec) from None
    rubric = _rubric(spec, base_dir, source)
    parser_config = _parser_config(spec, rubric, source)
    default_id = f"{spec.setup}{'-ref' if spec.reference else ''}-v1"
    template_id, template_source, where = _template(spec.template, default_id, base_dir, source, "template")
    solve_source, solve_where = None, ""
    if spec.solve_first:
        _, solve_source, solve_where = _template(spec.solve_template, "solve-v1", base_dir, source, "solve_template")
    elif spec.solve_template is not None:
        raise input_error(source, "only used when solve_first = true", field="solve_template")
    judge = Judge(
        name=spec.name,
        setup=spec.setup,
        rubric=rubric,
        template_id=template_id,
        template_source=template_source,
        parser_config=parser_config,
        reference=spec.reference,
        solve_first=spec.solve_first,
        structured=spec.structured,
        constrained=spec.constrained,
        solve_source=solve_source,
        provider=spec.provider,
        provider_options=spec.provider_options,
        model=spec.model,
        temperature=spec.temperature,
        max_tokens=spec.max_tokens,
    )
    if spec.constrained and judge.allowed() is None:
        raise input_error(
            source, f"a {spec.setup} judge has no fixed verdict strings to constrain", field="constrained"
        )
    own_solution = "S" if judge.solve_first else None
    _check_renders(lambda case: judge.render(case, judge.orders(case)[0], own_solution), where, "template", source)
    if judge.solve_first:
        _check_renders(judge.render_solve, solve_where, "solve_template", source)
    for i, example in enumerate(rubric.examples):
        result = judge.parse(example.judgment)
        if result.outcome != "ok":
            raise input_error(
                source, f"the example's judgment does not parse: {result.reason}", field=f"examples[{i}].judgment"
            )
    return judge


def load_judge(path: str | Path) -> Judge:
    """Load a judge file (TOML); relative rubric and template paths are read from its folder."""
    path = Path(path)
    data = read_toml(path)
    if "members" in data and "setup" not in data:
        raise input_error(
            path,
            "a panel file (its [[members]] vote as one judge): juge run and juge route --eval read it (as --judge "
            "or [[judges]] file = ...); this takes one judge: name one of its members' files",
            field="members",
        )
    try:
        return judge_from_dict(data, base_dir=path.parent, source=str(path))
    except InputError as exc:
        raise with_toml_line(exc, path, path.read_text(encoding="utf-8")) from None
