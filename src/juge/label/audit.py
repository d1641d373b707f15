"""The weekly audit closed (issue 24): ``juge audit-sample --label-project`` sends the judge's sampled decisions to a
blind labelling project (the items only: the judge's verdicts stay in the policy file, never in the label store),
and ``juge audit status`` reads every draw back against the labels people gave.

Here, above the policy layer, because both read or write the label store; the figures are
:func:`juge.policy.audit_status.audit_figures`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from juge.errors import InputError
from juge.label.api import _opened, _refused
from juge.policy.audit_status import audit_figures, audit_record, record_audit
from juge.policy.inputs import load_policy
from juge.policy.results import AuditSample, AuditStatus, PolicyResult

if TYPE_CHECKING:
    from juge.runs.results import Run


def audit_sample(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    run: str | Run,
    *,
    db: str | Path | None = None,
    n: int = 10,
    seed: int | None = None,
    force: bool = False,
    label_project: str | None = None,
    rubric: str | Path | None = None,
    db_url: str | None = None,
    drawn_at: datetime | None = None,
) -> AuditSample:
    """The weekly audit (``juge audit-sample``): ``n`` random decisions the policy's judge made alone in a stored
    run, each with the item and the judge's raw texts; ``seed`` defaults to the ISO year and week. A policy that did
    not hold is refused unless ``force`` (recorded). When ``policy`` is a file, the draw is recorded in it
    (``audits``: week, run, seed, items, verdicts) for :func:`audit_status`.

    ``label_project``: also add the sampled items (the run's cases, without any verdict) to that blind labelling
    project, created with ``rubric`` (a rubric TOML or the judge file) when it does not exist yet, in the label
    store ``db_url`` (default: the SQLite file ``db``). ``drawn_at``: the time the draw is recorded at (now).
    """
    from juge.label.rubric import read_rubric
    from juge.policy.api import audit_sample as draw
    from juge.store import open_store

    document = load_policy(policy)
    task = document.judge_kind
    url = db_url or (f"sqlite:///{db}" if db is not None else None)
    parsed_rubric = None
    if label_project is not None:  # everything that can refuse is checked before the draw records anything
        with _opened(url) as store:
            exists = label_project in store.project_names()
            if exists:
                with _refused("--label-project: "):
                    project = store.project(label_project)
                if project.task != task:
                    raise InputError(
                        f"--label-project {label_project}: a {project.task} project; this policy's judge is {task}. "
                        "Name a new project (with --rubric) for this audit"
                    )
            elif rubric is None:
                raise InputError(
                    f"--label-project {label_project}: no such project yet; give --rubric (the judge's rubric TOML or "
                    "judge file) to create it"
                )
        if not exists:
            assert rubric is not None
            parsed_rubric = read_rubric(rubric, task)
    result = draw(policy, run, db=db, n=n, seed=seed, force=force)
    added = None
    if label_project is not None:
        ids = [d.item_id for d in result.sample]
        with open_store(db, must_exist=True) as runs:
            cases = {c.id: c for c in runs.run_cases(result.run_id) if c.id in set(ids)}
        chosen = [cases[i] for i in ids if i in cases]
        with _opened(url) as store, _refused("--label-project: "):
            if parsed_rubric is not None:
                store.create_project(label_project, task, parsed_rubric, chosen, seed=result.seed)
                added = len(chosen)
            else:
                added = len(store.add_items(store.project(label_project), chosen, seed=result.seed))
    record = audit_record(result.run_id, result.seed, result.sample, label_project=label_project, drawn_at=drawn_at)
    recorded = isinstance(policy, str | Path)
    if isinstance(policy, str | Path):
        record_audit(Path(policy), record)
    return result.model_copy(
        update={"week": record.week, "recorded": recorded, "label_project": label_project, "label_items_added": added}
    )


def audit_status(
    policy: PolicyResult | Mapping[str, Any] | str | Path,
    *,
    db_url: str | None = None,
    alpha: float = 0.05,
) -> AuditStatus:
    """Every audit of ``policy`` so far (the policy file's ``audits``) against the labels people gave in their
    labelling projects (label store ``db_url``): judge-vs-person agreement per week and cumulatively, per category
    and overall, beside the bar the policy was derived against, with an anytime-valid drift test at ``alpha``
    (``juge audit status``). ``.outcome``: holding, drifted or too few labels yet."""
    document = load_policy(policy)
    wanted = sorted({r.label_project for r in document.audits if r.label_project is not None})
    labels = {}
    missing = []
    if wanted:
        with _opened(db_url) as store:
            present = set(store.project_names())
            for name in wanted:
                if name in present:
                    labels[name] = store.export_labels(store.project(name))
                else:
                    missing.append(name)
    result = audit_figures(document, labels, alpha=alpha)
    if not missing:
        return result
    note = (
        f"labelling projects not in the label store: {', '.join(missing)} (their items count as unlabelled; give "
        "the store they are in with --db or --db-url)"
    )
    return result.model_copy(update={"notes": [*result.notes, note]})
