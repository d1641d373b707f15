"""The eval file (TOML): which cases, which system under test, which checks and judges.

```toml
name = "bakery-support"
cases = "cases.jsonl"            # relative to this file
sample = 20                       # optional: a seeded random sample
seed = 0
mapping = { id = "ticket_id" }   # optional column mapping

[provider]                        # default provider for judges (and the system)
name = "scripted"                 # openai | anthropic | replay | scripted | llamacpp | a plugin
options = { default = "PASS\nFine." }

[system]                          # optional: generate outputs instead of reading `output`
model = "bakery-bot-v2"
template = "system.j2"            # Jinja2: `input` (the question, or a multi-turn case's last
                                  # user turn; earlier turns are sent as history) and `case`
provider = { name = "scripted", options = { ... } }

[[checks]]
kind = "forbidden_words"
words = ["Crumbl"]

[[judges]]
file = "judges/faithful.toml"     # or the judge's table inline

[[panels]]                        # optional: judges of this file voting as one judge, `jury/majority`
name = "jury"
members = ["faithful", "faithful-b", "faithful-c"]
aggregate = "majority"            # unanimous; mean or median for scores
ties = "person"                   # a split goes to a person; "tie": a pairwise tie (C)

[engine]                          # every number finite; bounds in brackets
concurrency = 8                   # [1, 1024]
retries = 4                       # [0, 20]
timeout = 60                      # seconds per call, (0, 3600]
backoff = 1.0                     # seconds before the first retry, doubling, [0, 300]
max_backoff = 60                  # longest wait between attempts, [0, 3600]
mode = "online"                   # or "batch": OpenAI Batch / Anthropic Message Batches (half price)
rpm = 500                         # optional: requests per minute, per provider (sent no faster)
tpm = 200000                      # optional: tokens per minute, per provider

[engine.limits."gpt-4o-mini"]     # optional: a budget for one model (or one provider name)
tpm = 100000

[gate]
min_pass_rate = 0.9               # exit code 1 below this
min_pass_rate_lower = 0.8         # exit code 1 when the pass rate's 95 % lower bound is below this
labels = "labels.jsonl"           # optional: human labels on a random subset; the lower bound is then PPI++'s
min_score = 3                     # a score/criteria/additive judge passes a case at this score

[prices]                          # US$ per million tokens, [0, 1000000]
"my-model" = { input = 0.5, output = 1.5 }
```

The endpoint a caller names on the command line (``--base-url``, ``--api-key-env``, ``--model``) overrides the
file's provider through :func:`provider_override` and :func:`with_model`.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Callable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

from pydantic import ConfigDict, Field, ValidationError, field_validator

from juge.checks import Check, CheckConfigError, make_check
from juge.errors import InputError, input_error, parse_toml, pydantic_field, toml_key_line, with_toml_line
from juge.parts import Documented
from juge.visible import visible_name

if TYPE_CHECKING:
    from juge.judges.judge import Judge
    from juge.judges.panel import Panel


class ProviderSpec(Documented):
    model_config = ConfigDict(extra="forbid")
    name: str  # no default: the test-only `scripted` provider is never chosen silently
    """The provider: openai, anthropic, azure, litellm, llamacpp, replay, scripted, or a plugin's name. Required:
    juge never falls back to the test-only scripted provider."""
    options: dict[str, Any] = Field(default_factory=dict)
    """The provider's own options (base_url, api_key_env, model_path, ...; README, Providers)."""


class SystemSpec(Documented):
    model_config = ConfigDict(extra="forbid")
    model: str
    """The model of the system under test that writes the outputs."""
    template: str
    """A Jinja2 file (relative to the eval file) rendering the system's prompt from `input` and `case`."""
    provider: ProviderSpec | None = None
    """The system's provider, when it is not the eval's `[provider]`."""
    temperature: float = 0.0
    """The system's sampling temperature."""
    max_tokens: int = 1024
    """The longest output the system may write, in tokens."""


MAX_TIMEOUT = 3600.0  # seconds one call may take
MAX_BACKOFF = 300.0  # seconds of the first retry's wait (it doubles per attempt, up to max_backoff)
MAX_WAIT = 3600.0  # seconds of any one wait between attempts (also a server's Retry-After) or status checks
MAX_PRICE = 1_000_000.0  # US$ per million tokens: $1 a token, far above any list price
Price = Annotated[float, Field(ge=0, le=MAX_PRICE, allow_inf_nan=False)]
PRICE_KEYS = ("input", "output", "batch_input", "batch_output")


class LimitSpec(Documented):
    """A rate budget: requests and tokens per minute (None: no limit)."""

    model_config = ConfigDict(extra="forbid")
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute (none: no limit)."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute, prompt and answer (none: no limit)."""


class PanelSpec(Documented):
    """A panel: judges of the same eval file voting as one judge (``juge.judges.panel``)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, pattern=r"^[^/]+$")
    """The panel's name; it is judged as `NAME/AGGREGATE` (e.g. `jury/majority`), unique among the judges."""

    @field_validator("name")
    @classmethod
    def _visible_name(cls, name: str) -> str:
        return visible_name(name)

    members: list[str] = Field(min_length=2)
    """The judges voting (names of `[[judges]]` in this file, two or more, of one setup)."""
    aggregate: Literal["majority", "unanimous", "mean", "median"] = "majority"
    """majority (more than half of all members), unanimous, or mean / median of scores (every member's needed)."""
    ties: Literal["person", "tie"] = "person"
    """When every member answered and they do not settle it: person (no verdict, a person decides), or tie
    (pairwise only: the panel's verdict is a tie, C)."""


class PanelFileSpec(Documented):
    """A panel file: a judge file whose judges vote as one (named by `[[judges]] file = ...` or `--judge`)."""

    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, pattern=r"^[^/]+$")
    """The panel's name; it is judged as `NAME/AGGREGATE`."""

    @field_validator("name")
    @classmethod
    def _visible_name(cls, name: str) -> str:
        return visible_name(name)

    members: list[dict[str, Any]] = Field(min_length=2)
    """The judges voting, each a `[[members]]` table: a judge file's keys, or `file = "judge.toml"` (relative to
    this file); two or more, of one setup, with different names."""
    aggregate: Literal["majority", "unanimous", "mean", "median"] = "majority"
    """As in `[[panels]]`."""
    ties: Literal["person", "tie"] = "person"
    """As in `[[panels]]`."""


def _file_error(path: Path) -> Callable[[str, str], InputError]:
    """``error(message, key)`` about a key of the TOML file at `path`, naming its line when it can."""

    def error(message: str, key: str) -> InputError:
        line = toml_key_line(path.read_text(encoding="utf-8"), key) if path.is_file() else None
        return input_error(path, message, line=line, field=key)

    return error


class EngineSpec(Documented):
    model_config = ConfigDict(extra="forbid")
    concurrency: int = Field(default=8, ge=1, le=1024)  # bench/throughput.py runs 1,024 calls in flight
    """Calls in flight at once, per run."""
    retries: int = Field(default=4, ge=0, le=20)
    """Attempts after the first for a call that failed on a rate limit, a server error or a time-out."""
    # Finite and bounded: `backoff = 1e308` or `timeout = inf` would make a run against a failing server hang.
    timeout: float = Field(default=120.0, gt=0, le=MAX_TIMEOUT, allow_inf_nan=False)
    """Seconds one call may take."""
    backoff: float = Field(default=1.0, ge=0, le=MAX_BACKOFF, allow_inf_nan=False)
    """Seconds before the first retry; each retry doubles it, with jitter."""
    max_backoff: float = Field(default=60.0, ge=0, le=MAX_WAIT, allow_inf_nan=False)
    """The longest wait between attempts, in seconds (also the most of a server's Retry-After that is honoured)."""
    mode: Literal["online", "batch"] = "online"  # batch: the provider's batch API (half price, within 24 h)
    """online, or batch: the provider's batch API (OpenAI, Azure, Anthropic), half price, answered within 24 h."""
    batch_poll: float = Field(
        default=30.0, gt=0, le=MAX_WAIT, allow_inf_nan=False
    )  # seconds between status checks of `juge run --wait`
    """Batch mode: seconds between status checks of `juge run --wait`."""
    batch_size: int | None = Field(default=None, ge=1)  # most requests per batch (default: the provider's limit)
    """Batch mode: the most requests per batch (default: the provider's limit)."""
    # Rate budgets, enforced before a request is sent (juge.engine.limits): per provider, and in `limits`
    # per provider name or model name ([engine.limits."gpt-4o-mini"] rpm = ..., tpm = ...).
    rpm: int | None = Field(default=None, ge=1)
    """Requests per minute per provider (endpoint), enforced before a request is sent."""
    tpm: int | None = Field(default=None, ge=1)
    """Tokens per minute per provider (endpoint), enforced before a request is sent."""
    limits: dict[str, LimitSpec] = Field(default_factory=dict)
    """Budgets for one provider name or model name: `[engine.limits."gpt-4o-mini"] tpm = 100000`."""

    def call_options(self) -> dict[str, Any]:
        """What every call of a run takes from this spec (`juge.engine.EngineOptions`): retries, timeouts,
        rate budgets."""
        return {
            "retries": self.retries,
            "timeout": self.timeout,
            "backoff": self.backoff,
            "max_backoff": self.max_backoff,
            "rpm": self.rpm,
            "tpm": self.tpm,
            "limits": {name: (limit.rpm, limit.tpm) for name, limit in self.limits.items()},
        }


class GateSpec(Documented):
    model_config = ConfigDict(extra="forbid")
    min_pass_rate: float | None = Field(default=None, ge=0, le=1)
    """`juge run` exits 1 when the share of cases passing every check and judge is below this."""
    min_pass_rate_lower: float | None = Field(default=None, ge=0, le=1)
    """`juge run` exits 1 when the pass rate's 95 % lower bound is below this (exact interval, or PPI++ with
    `labels`)."""
    labels: str | None = None
    """Human labels on a random subset of the cases (a file): the lower bound is then PPI++'s, corrected by them."""
    min_score: float | None = Field(default=None, allow_inf_nan=False)
    """The score at which a score, criteria or additive judge passes a case (without it, such judges are not
    counted in the pass rate)."""


class EvalSpec(Documented):
    model_config = ConfigDict(extra="forbid")
    name: str | None = None
    """The eval's name, shown by `juge runs`."""
    cases: str
    """The cases file (JSONL, CSV, TSV, Parquet, .gz), relative to the eval file."""
    sample: int | None = Field(default=None, ge=1)
    """Judge a seeded random sample of this many cases."""
    seed: int = 0
    """The sample's seed."""
    mapping: dict[str, str] = Field(default_factory=dict)
    """Other column names read as juge fields, as `--map` does: `{ id = "ticket", output = "reply" }`."""
    provider: ProviderSpec | None = None
    """The default provider of the judges (and of the system under test)."""
    system: SystemSpec | None = None
    """A system under test that writes the outputs, instead of reading `output` from the cases."""
    checks: list[dict[str, Any]] = Field(default_factory=list)
    """Deterministic checks, each a `[[checks]]` table with its `kind` and options (below)."""
    judges: list[dict[str, Any]] = Field(default_factory=list)
    """The judges, each a `[[judges]]` table: `file = "judges/x.toml"`, or a judge file's keys inline."""
    panels: list[PanelSpec] = Field(default_factory=list)
    """Panels of this file's judges voting as one judge, each a `[[panels]]` table: `name`, `members`,
    `aggregate`, `ties`. A run calls the members and stores the panel's verdicts as one more judge; a case's
    pass or fail reads the panel's verdict, not its members'."""
    engine: EngineSpec = Field(default_factory=EngineSpec)
    """How calls are made: concurrency, retries, time-outs, rate budgets, batch mode."""
    gate: GateSpec = Field(default_factory=GateSpec)
    """When `juge run` fails (exit 1): a pass rate, or its lower bound."""
    prices: dict[str, dict[Literal["input", "output", "batch_input", "batch_output"], Price]] = Field(
        default_factory=dict
    )
    """US$ per million tokens by model: `"my-model" = { input = 0.5, output = 1.5 }` (batch_input, batch_output
    optional)."""

    @field_validator("prices")
    @classmethod
    def _price_rows_are_whole(cls, prices: dict[str, dict[str, float]]) -> dict[str, dict[str, float]]:
        for model, row in prices.items():
            missing = [k for k in ("input", "output") if k not in row]
            if missing:
                raise ValueError(f"the price row of {model!r} needs {' and '.join(missing)} (US$ per million tokens)")
        return prices


class EvalConfig:
    """A loaded eval file: its spec, its directory (for relative paths), built checks and judges."""

    #: What made the run this eval is judged in (``juge runs`` lists only "eval" runs unless --all): live
    #: routing sets "route".
    run_kind = "eval"

    def __init__(self, spec: EvalSpec, base_dir: Path, source: str, raw: bytes):
        self.spec = spec
        self.base_dir = base_dir
        self.source = source
        self.hash = hashlib.sha256(raw).hexdigest()
        self.text = raw.decode("utf-8", errors="replace")
        self.checks: list[Check] = []
        for i, table in enumerate(spec.checks):
            try:
                self.checks.append(make_check(table, base_dir))
            except CheckConfigError as exc:
                raise self.error(str(exc), f"checks[{i}]") from None
        self.judges: list[Judge] = []
        # The judge file each judge came from (None: the judge's table is in this eval file), and its [[judges]]
        # entry (a panel file's members share theirs).
        self.judge_files: list[Path | None] = []
        self._entries: list[int] = []
        file_panels: list[tuple[PanelSpec, Callable[[str, str], InputError]]] = []
        for i, table in enumerate(spec.judges):
            panel_file = self._panel_file(i, table)
            if panel_file is None:
                self.judges.append(self._judge(i, table))
                self.judge_files.append(self.base_dir / table["file"] if "file" in table else None)
                self._entries.append(i)
                continue
            path, panel_spec, members = panel_file
            self.judges += members
            self.judge_files += [path] * len(members)
            self._entries += [i] * len(members)
            file_panels.append((panel_spec, _file_error(path)))
        names = [j.name for j in self.judges]
        if len(set(names)) != len(names):
            raise self.error(f"two judges share a name: {names}", "judges")
        self.panels: list[Panel] = []
        checked = [*file_panels, *((p, self._field_error(f"panels[{i}]")) for i, p in enumerate(spec.panels))]
        for panel_spec, error in checked:
            self.panels.append(self._panel(panel_spec, error))

    def _field_error(self, where: str) -> Callable[[str, str], InputError]:
        return lambda message, key: self.error(message, f"{where}.{key}")

    def _panel(self, spec: PanelSpec, error: Callable[[str, str], InputError]) -> Panel:
        """A panel checked against this eval's judges: a new name, members that exist, of one setup that the
        aggregation and the tie rule suit. ``error(message, key)`` names where the panel is written."""
        from juge.judges.panel import SCORE_AGGREGATIONS, Panel

        judges = {j.name: j for j in self.judges}
        if spec.name in judges or spec.name in {p.name for p in self.panels}:
            raise error(f"panel {spec.name!r}: a judge or panel already has that name", "name")
        if len(set(spec.members)) != len(spec.members):
            raise error(f"panel {spec.name!r}: a member is named twice: {spec.members}", "members")
        unknown = [m for m in spec.members if m not in judges]
        if unknown:
            raise error(
                f"panel {spec.name!r}: no judge {unknown[0]!r} in this file (judges: {', '.join(judges) or 'none'})",
                "members",
            )
        setups = sorted({judges[m].setup for m in spec.members})
        if len(setups) > 1:
            raise error(f"panel {spec.name!r}: its members are of different setups ({', '.join(setups)})", "members")
        setup = setups[0]
        if setup == "criteria":
            raise error(f"panel {spec.name!r}: criteria judges cannot vote as one (a verdict per criterion)", "members")
        if spec.aggregate in SCORE_AGGREGATIONS and setup not in ("score", "additive"):
            raise error(
                f"panel {spec.name!r}: {spec.aggregate} needs score or additive judges, not {setup}", "aggregate"
            )
        if spec.ties == "tie" and setup != "pairwise":
            raise error(f'panel {spec.name!r}: ties = "tie" is for pairwise judges, not {setup}', "ties")
        return Panel(spec.name, tuple(spec.members), spec.aggregate, spec.ties)

    def _panel_file(self, i: int, table: dict[str, Any]) -> tuple[Path, PanelSpec, list[Judge]] | None:
        """A `[[judges]]` entry naming a panel file (a judge file with `[[members]]`): its path, the panel, and its
        members (judge tables, or `file = ` paths relative to the panel file); None for a judge file."""
        from juge.judges import judge_from_dict, load_judge
        from juge.judges.rubric import read_toml

        if "file" not in table:
            return None
        if not isinstance(table["file"], str):  # `file = 3` would fail as a path, with a traceback
            raise self.error(f"file must be a path (text), got {table['file']!r:.60}", f"judges[{i}].file")
        path = self.base_dir / table["file"]
        if not path.is_file() or path.suffix.lower() != ".toml":
            return None  # the judge's own loading says what is wrong
        data = read_toml(path)
        if "members" not in data:
            return None
        try:
            spec = PanelFileSpec.model_validate(data)
        except ValidationError as exc:
            field, message = pydantic_field(exc, known=PanelFileSpec)
            text = path.read_text(encoding="utf-8")
            raise input_error(path, message, line=toml_key_line(text, field) if field else None, field=field) from None
        members = []
        for k, member in enumerate(spec.members):
            if "file" in member:
                extra = sorted(set(member) - {"file"})
                if extra:
                    raise _file_error(path)(f"a member given by file takes no other keys: {extra}", f"members[{k}]")
                if not isinstance(member["file"], str):
                    raise _file_error(path)(
                        f"file must be a path (text), got {member['file']!r:.60}", f"members[{k}].file"
                    )
                member_path = path.parent / member["file"]
                if not member_path.is_file():
                    raise _file_error(path)(f"judge file {member['file']!r} not found (looked for {member_path})",
                                            f"members[{k}].file")  # fmt: skip
                members.append(load_judge(member_path))
                continue
            try:
                members.append(judge_from_dict(member, base_dir=path.parent, source=str(path)))
            except InputError as exc:
                raise with_toml_line(exc, path, path.read_text(encoding="utf-8"), prefix=f"members[{k}]") from None
        seen: dict[str, int] = {}
        for k, m in enumerate(members):  # named here, not later as two judges of the run sharing a name
            if m.name in seen:
                raise _file_error(path)(
                    f"members[{seen[m.name]}] and members[{k}] are both named {m.name!r}: each member needs its own",
                    f"members[{k}].name",
                )
            seen[m.name] = k
        panel = PanelSpec(name=spec.name, members=[m.name for m in members], aggregate=spec.aggregate, ties=spec.ties)
        return path, panel, members

    def error(self, message: str, field: str) -> InputError:
        """An error about one field of this eval file, naming the line that sets it when it can."""
        return input_error(self.source, message, line=toml_key_line(self.text, field), field=field)

    def judge_error(self, i: int, message: str, field: str) -> InputError:
        """An error about one field of judge `i`: in its judge (or panel) file, or in this eval file's judges."""
        path = self.judge_files[i]
        if path is None:
            return self.error(message, f"judges[{self._entries[i]}].{field}")
        line = toml_key_line(path.read_text(encoding="utf-8"), field) if path.is_file() else None
        return input_error(path, message, line=line, field=field)

    def _judge(self, i: int, table: dict[str, Any]) -> Judge:
        from juge.judges import judge_from_dict, load_judge

        if "file" in table:
            path = self.base_dir / table["file"]
            if not path.is_file():  # named where it is given, not only as a path that is not there
                found = "is a folder" if path.is_dir() else "not found"
                raise self.error(f"judge file {table['file']!r} {found} (looked for {path})", f"judges[{i}].file")
            judge = load_judge(path)
            extra = {k: v for k, v in table.items() if k != "file"}
            if extra:
                raise self.error(f"a judge given by file takes no other keys: {sorted(extra)}", f"judges[{i}]")
            return judge
        try:
            return judge_from_dict(table, base_dir=self.base_dir, source=self.source)
        except InputError as exc:
            raise with_toml_line(exc, self.source, self.text, prefix=f"judges[{i}]") from None

    def path(self, relative: str) -> Path:
        return (self.base_dir / relative).resolve()

    @property
    def cases_path(self) -> Path:
        return self.path(self.spec.cases)

    def hash_with(self, judges: Sequence[Judge]) -> str:
        """Eval identity for resume: the file's bytes plus each judge's version."""
        h = hashlib.sha256(self.hash.encode())
        for j in judges:
            h.update(f"{j.name}:{j.template_hash}".encode())
        return h.hexdigest()


def load_eval(path: str | Path) -> EvalConfig:
    path = Path(path)
    if not path.exists():
        raise InputError(f"{path}: eval file not found")
    raw = path.read_bytes()
    data, text = parse_toml(path, raw)
    try:
        spec = EvalSpec.model_validate(data)
    except ValidationError as exc:
        field, message = pydantic_field(exc, known=EvalSpec)
        line = toml_key_line(text, field) if field else None
        raise input_error(path, message, line=line, field=field) from None
    return EvalConfig(spec, path.parent.resolve(), str(path), raw)


def eval_config(
    eval_or_path: Any = None,
    *,
    cases: str | Path | None = None,
    judges: Sequence[str | Path] | None = None,
    mapping: Mapping[str, str] | None = None,
) -> EvalConfig:
    """An eval: loaded from its file (TOML), given as an EvalConfig, or made of a cases file and judge files
    (``mapping`` reads other column names as juge fields, e.g. ``{"id": "ticket", "output": "reply"}``)."""
    from juge.arguments import refuse_text

    refuse_text("judges", judges, "list")
    refuse_text("mapping", mapping, "mapping")
    if eval_or_path is None and cases is None:
        raise InputError("give an eval file, or --cases with one or more --judge files (see juge run --help)")
    if eval_or_path is not None:
        if cases is not None or judges or mapping:
            raise InputError(
                "give either an eval file or --cases with --judge, not both "
                "(the eval file already names its cases and judges)"
            )
        if isinstance(eval_or_path, EvalConfig):
            return eval_or_path
        if isinstance(eval_or_path, str | Path):
            return load_eval(eval_or_path)
        raise InputError(f"juge.run: give an eval file path or an EvalConfig, not {type(eval_or_path).__name__}")
    assert cases is not None
    if not judges:
        raise InputError("--cases needs at least one --judge file")
    spec = EvalSpec(
        cases=str(Path(cases).resolve()),
        judges=[{"file": str(Path(p).resolve())} for p in judges],
        mapping=dict(mapping or {}),
    )
    return EvalConfig(spec, Path.cwd(), "command line", json.dumps(spec.model_dump(), sort_keys=True).encode())


# ---- endpoints: where a judge's calls go when the caller names it (--base-url, --api-key-env, --model) ----

_TAKES_ENDPOINT = ("openai", "anthropic")
_NO_ENDPOINT = ("scripted", "replay", "llamacpp")


def provider_override(
    provider: str | None, base_url: str | None, api_key_env: str | None, options: dict[str, Any] | None = None
) -> ProviderSpec | None:
    """The provider the command line names, with its endpoint options; None when it names none."""
    if (base_url or api_key_env) and provider is None:
        provider = "openai"
    if provider is None:
        return None
    if (base_url or api_key_env) and provider in _NO_ENDPOINT:
        raise InputError(
            f"--base-url and --api-key-env work with the {' and '.join(_TAKES_ENDPOINT)} providers, not {provider!r}"
        )
    opts = dict(options or {})
    if base_url:
        if not base_url.startswith(("http://", "https://")):
            raise InputError(f"--base-url {base_url}: give an http:// or https:// address")
        opts["base_url"] = base_url
    if api_key_env:
        opts["api_key_env"] = api_key_env
    return ProviderSpec(name=provider, options=opts)


def with_model(judges: Sequence[Judge], model: str | None) -> list[Judge]:
    """`judges` with `model` in place of each one's own (the version hash does not change: the model
    is recorded beside it)."""
    if not model:
        return list(judges)
    return [dataclasses.replace(j, model=model) for j in judges]
