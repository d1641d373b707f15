"""A judge's identity, and the one check that a judge is still the one a policy or calibration was measured on.

A calibration expires when its judge changes: the provider, the exact model version as the provider answered it,
the prompt template, the rubric or the parser. :class:`JudgeIdentity` carries what a record knows of each (a
policy file, a calibration, a stored run, a judge file about to be called); :func:`check_identity` compares an
expected identity (what was measured) with a found one (what is about to be trusted) and lists every difference
as an :class:`IdentityMismatch`. A part the expected side does not record is not compared (it is listed as
unchecked), except the model version, which every record carries.

``template_hash`` is the judge's version (:class:`juge.judges.judge.Judge`): it changes with the template, the
rubric, the parser options and the rendering, so a changed rubric always shows there; ``rubric_hash`` and
``parser_version``, when both sides record them, say which part moved.

Every command that trusts a measured judge (route, live routing, audit-sample, estimate and compare against a
policy or calibration) calls :func:`check_identity` through :func:`refuse_changed_identity`, which refuses
(exit 2) unless ``--force``, and then returns the FORCED warning the command records.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.data.records import Judgment
from juge.errors import InputError
from juge.parts import Part

if TYPE_CHECKING:
    from juge.judges.judge import Judge

IdentityField = Literal["provider", "model", "template_hash", "rubric_hash", "parser_version"]

FIELD_WORDS: dict[str, str] = {
    "provider": "provider",
    "model": "model version",
    "template_hash": "template hash (template, rubric, parser options)",
    "rubric_hash": "rubric",
    "parser_version": "parser version",
}


class JudgeIdentity(Part):
    """What a record knows of a judge: an empty list or None is a part it does not record."""

    judge: str | None = None
    """The judge's name."""
    template: str | None = None
    """The id of its prompt template."""
    provider: str | None = None
    """The provider that answered (openai, anthropic, ...)."""
    models: list[str] = []
    """The model versions as the provider answered them."""
    template_hashes: list[str] = []
    """The judge's version hashes (template, rubric, parser options, rendering)."""
    rubric_hashes: list[str] = []
    """The content hashes of its rubric."""
    parser_versions: list[str] = []
    """The versions of juge's verdict parsers it was read with."""

    @property
    def key(self) -> str:
        """``judge/template``, the key policies and calibrations use."""
        return f"{self.judge}/{self.template}"

    def values(self, field: IdentityField) -> list[str]:
        """The recorded values of one part (empty: not recorded)."""
        if field == "provider":
            return [self.provider] if self.provider else []
        plural = {"model": "models", "template_hash": "template_hashes", "rubric_hash": "rubric_hashes"}
        return [v for v in getattr(self, plural.get(field, "parser_versions")) if v]


class IdentityMismatch(Part):
    """One part of the judge that differs from the one measured."""

    field: IdentityField
    """provider, model, template_hash, rubric_hash or parser_version."""
    expected: list[str]
    """What was measured (empty: it was not recorded, so nothing shows the judge is the same)."""
    found: list[str]
    """What the judge has now."""

    def words(self) -> str:
        what = FIELD_WORDS[self.field]
        if not self.expected:
            return f"{what} {', '.join(self.found)} cannot be shown to be the one measured (none was recorded)"
        return f"{what} {', '.join(self.found)}, not {', '.join(self.expected)} as measured"


class IdentityCheck(Part):
    """The comparison of one judge with the identity it was measured with."""

    key: str
    """The judge's key (``judge/template``)."""
    expected: JudgeIdentity
    """The identity measured (from the policy or calibration)."""
    found: JudgeIdentity
    """The identity now (from the judge file, its answers or the stored run)."""
    mismatches: list[IdentityMismatch] = []
    """Every part that differs; empty: the same judge."""
    unchecked: list[IdentityField] = []
    """Parts not compared, as one side does not record them."""

    @property
    def ok(self) -> bool:
        """True when no part differs."""
        return not self.mismatches

    def words(self) -> str:
        """Why the judge is not the one measured (empty when it is)."""
        return "; ".join(m.words() for m in self.mismatches)


FIELDS: tuple[IdentityField, ...] = ("provider", "model", "template_hash", "rubric_hash", "parser_version")


def check_identity(
    expected: JudgeIdentity,
    found: JudgeIdentity,
    *,
    key: str | None = None,
    require: Sequence[IdentityField] = ("model",),
) -> IdentityCheck:
    """Compare ``found`` with ``expected``, part by part: a part differs when ``found`` records a value
    ``expected`` does not list. A part ``expected`` does not record is a mismatch when in ``require`` (nothing
    shows it is the same), else unchecked; a part ``found`` does not record is unchecked."""
    mismatches, unchecked = [], []
    for field in FIELDS:
        want, have = expected.values(field), found.values(field)
        if not have or (not want and field not in require):
            unchecked.append(field)
            continue
        extra = sorted(set(have) - set(want))
        if extra:
            mismatches.append(IdentityMismatch(field=field, expected=sorted(want), found=extra))
    return IdentityCheck(
        key=key or expected.key, expected=expected, found=found, mismatches=mismatches, unchecked=unchecked
    )


def identities_of_calls(calls: Iterable[Judgment]) -> dict[str, JudgeIdentity]:
    """The identity each judge key (``judge/template``) shows in recorded calls: models as answered and
    template hashes."""
    seen: dict[str, tuple[str, str, set[str], set[str]]] = {}
    for j in calls:
        _, _, models, hashes = seen.setdefault(f"{j.judge}/{j.template}", (j.judge, j.template, set(), set()))
        models.add(j.model)
        if j.template_hash:
            hashes.add(j.template_hash)
    return {
        key: JudgeIdentity(judge=judge, template=template, models=sorted(models), template_hashes=sorted(hashes))
        for key, (judge, template, models, hashes) in seen.items()
    }


def identity_of_version(info: Mapping[str, Any]) -> JudgeIdentity:
    """The identity a policy or calibration records of one judge (its ``judges`` entry: judge, template, models,
    template_hashes, and provider, rubric_hashes, parser_versions when recorded)."""
    return JudgeIdentity(
        judge=info.get("judge"),
        template=info.get("template"),
        provider=info.get("provider"),
        models=list(info.get("models") or []),
        template_hashes=list(info.get("template_hashes") or []),
        rubric_hashes=list(info.get("rubric_hashes") or []),
        parser_versions=[str(v) for v in info.get("parser_versions") or []],
    )


def measured_identities(document: Mapping[str, Any]) -> tuple[str, dict[str, JudgeIdentity]]:
    """What a policy file (``judges``) or a calibration (``versions.judges``) measured: ``policy`` or
    ``calibration``, and each judge's identity by its key (trivial baselines left out: no model to change)."""
    if document.get("kind") == "juge-policy":
        what, judges = "policy", document.get("judges")
    else:
        what, judges = "calibration", (document.get("versions") or {}).get("judges")
    if not isinstance(judges, Mapping) or not judges:
        raise InputError(
            f"the {what} records no judge identity (no {'judges' if what == 'policy' else 'versions.judges'})"
        )
    return what, {
        key: identity_of_version(info)
        for key, info in judges.items()
        if isinstance(info, Mapping) and not info.get("baseline")
    }


def read_measured(path: str | Path) -> tuple[str, dict[str, JudgeIdentity]]:
    """:func:`measured_identities` of a policy or calibration JSON file."""
    from juge.files import read_json_object

    document = read_json_object(Path(path), "policy or calibration")
    try:
        return measured_identities(document)
    except InputError as exc:
        raise InputError(f"{path}: {exc}") from None


def check_calls_against(measured: Mapping[str, JudgeIdentity], calls: Iterable[Judgment]) -> list[IdentityCheck]:
    """Each judge in ``calls`` that was measured (matched by name and template, or by name when the measurement
    records no template) compared with its measured identity. Empty: no judge of the calls was measured."""
    found = identities_of_calls(calls)
    checks = []
    for expected in measured.values():
        for key, ident in found.items():
            if ident.judge == expected.judge and expected.template in (None, ident.template):
                checks.append(check_identity(expected, ident, key=key))
    return checks


def rubric_hash(judge: Judge) -> str:
    """12 hex of the rubric's canonical JSON: which part of a changed template hash is the rubric."""
    data = json.dumps(judge.rubric.model_dump(mode="json"), sort_keys=True, ensure_ascii=False)
    return hashlib.sha256(data.encode("utf-8")).hexdigest()[:12]


def identity_of_judge(judge: Judge, *, provider: str | None = None, model: str | None = None) -> JudgeIdentity:
    """The identity of a configured judge, answering as ``model`` (default: the model its file asks for)."""
    from juge.judges.parsers import PARSER_VERSION

    return JudgeIdentity(
        judge=judge.name,
        template=judge.template_id,
        provider=provider,
        models=[model or judge.model],
        template_hashes=[judge.template_hash],
        rubric_hashes=[rubric_hash(judge)],
        parser_versions=[str(PARSER_VERSION)],
    )


class IdentityUse(Part):
    """What a command that trusts a measured judge records of the identity check (``identity`` in its JSON)."""

    expired: bool = False
    """True when a judge is not the one measured (the policy or calibration has expired)."""
    forced: bool = False
    """True when --force used the expired policy or calibration anyway."""
    warning: str | None = None
    """FORCED: what changed."""
    checks: list[IdentityCheck] = []
    """Each judge's comparison with the identity measured."""


def identity_use(
    checks: Sequence[IdentityCheck], *, force: bool, source: str, command: str, what: str = "policy"
) -> IdentityUse:
    """The identity checks as a command records them: refused (InputError, exit 2) when a judge is not the one
    ``what`` measured, naming each difference, unless ``force``; then FORCED, with the warning."""
    warning = refuse_changed_identity(checks, force=force, source=source, command=command, what=what)
    return IdentityUse(expired=warning is not None, forced=warning is not None, warning=warning, checks=list(checks))


def refuse_changed_identity(
    checks: Sequence[IdentityCheck], *, force: bool, source: str, command: str, what: str = "policy"
) -> str | None:
    """Refuse (InputError, exit 2) when a judge is not the one ``what`` measured, naming each difference; with
    ``force``, the FORCED warning the command records. None when every judge is the same."""
    changed = [c for c in checks if not c.ok]
    if not changed:
        return None
    why = "; ".join(f"judge {c.key}: {c.words()}" for c in changed)
    fields = {m.field for c in changed for m in c.mismatches}
    part = "model" if "model" in fields else "provider" if "provider" in fields else "template"
    if not force:
        raise InputError(
            f"{source}: the {what} has EXPIRED: {why}. A {what} says nothing about another judge: measure the "
            f"change (juge drift on an anchor set), then derive a new {what} for this {part}; or pass --force to "
            "use it anyway (recorded, shown as FORCED)"
        )
    return f"FORCED: the {what} has EXPIRED ({why}); `{command}` used it anyway with --force (recorded)"


def check_runs_against(
    path: str | Path, calls_by_run: Mapping[str, Sequence[Judgment]], *, force: bool, command: str
) -> IdentityUse:
    """The judges of stored runs checked against the policy or calibration at ``path`` (``estimate --against``,
    ``compare --against``): refused (exit 2) when a run has no measured judge, or when one changed, unless
    ``force`` (then FORCED)."""
    what, measured = read_measured(path)
    checks = []
    for run_id, calls in calls_by_run.items():
        found = check_calls_against(measured, calls)
        if not found:
            judges = sorted({f"{j.judge}/{j.template}" for j in calls})
            raise InputError(
                f"{path}: run {run_id} has no judge the {what} measured ({', '.join(measured)}); its judges: "
                f"{', '.join(judges) or 'none'}"
            )
        checks += [c.model_copy(update={"key": f"run {run_id[:12]} {c.key}"}) for c in found]
    return identity_use(checks, force=force, source=str(path), command=command, what=what)
