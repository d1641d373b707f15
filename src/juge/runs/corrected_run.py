"""`juge estimate`: a stored run's pass rate corrected by human labels on a random subset of its cases. Reads
the run and the labels; the statistics are in :mod:`juge.runs.corrected` (imported on call: numpy)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from juge.errors import InputError

if TYPE_CHECKING:
    from juge.calibration.source import StudySource
    from juge.data.draw import LabelDraw
    from juge.data.readers import Source
    from juge.runs.results import EstimateResult, Run
    from juge.runs.verdicts import CaseOutcome


def estimate(
    run: str | Run,
    labels: Source | None = None,
    *,
    db: str | Path | None = None,
    threshold: float | None = None,
    label_threshold: float | None = None,
    confidence: float = 0.95,
    resamples: int = 2000,
    seed: int = 0,
    labels_map: Mapping[str, str] | None = None,
    scale: Mapping[str, Any] | None = None,
    kind: Literal["score", "passfail"] | None = None,
    missing: Iterable[str] = (),
    format: str | None = None,
    source: StudySource | None = None,
    against: str | Path | None = None,
    force: bool = False,
    strata: Literal["category"] | None = None,
    selection: str | Path | Mapping[str, Any] | None = None,
) -> EstimateResult:
    """The corrected pass rate of a stored run (``juge estimate``): judge-only, human-only, PPI++ and the
    sensitivity/specificity plug-in, from human ``labels`` (path, DataFrame or rows) on a random subset.

    The labels are read as every command reads them (``labels_map``, ``scale``, ``kind``, ``missing``,
    ``format``, or all of them in ``source``): 1/0 beside a PASS/FAIL judge are PASS/FAIL, scores pass at
    ``label_threshold`` (else the judge's threshold). ``against``: a policy or calibration file whose judge the
    run's must still be (model version as answered, template hash): refused when it changed unless ``force``
    (then FORCED, in ``identity`` and ``warnings``). ``strata="category"`` adds stratified PPI++
    (PPI++ within each category of the run's cases, combined by their shares). ``selection``: how the labelled
    items were drawn, as ``juge label init --select ... --json`` recorded it (the file, or its ``selection``); labels
    drawn by category are estimated by category (stratified PPI++ is then the figure to report), labels drawn each
    with its own chance (decisive) weighted by its inverse (:func:`selection_estimator` decides)."""
    from juge.data.results import KindGuess
    from juge.runs.corrected import corrected_pass_rate

    read = read_pass_rate(
        run, labels, db=db, threshold=threshold, label_threshold=label_threshold, labels_map=labels_map,
        scale=scale, kind=kind, missing=missing, format=format, source=source, against=against, force=force,
    )  # fmt: skip
    outcomes, human, warnings, notes, identity = read.outcomes, read.human, read.warnings, read.notes, read.identity
    run_row, guess = read.run_row, read.kind_guess
    if selection is None and read.draw is not None and read.draw.unequal:
        raise InputError(
            f"{read.draw.source}: these labels come from a {read.draw.method} draw (juge label init --select "
            f"{read.draw.method}), whose items had unequal chances of being labelled: give --selection FILE, that "
            "command's --json, so the estimate weights each label by 1 / its chance and checks the run's cases are "
            "the ones drawn from"
        )
    use = None if selection is None else selection_estimator(selection, read.categories, human)
    if use is not None and use.estimator == "inverse-probability":
        from juge.runs.corrected import weighted_pass_rate

        if strata is not None:
            notes.append(
                "--strata category is not used: labels drawn each with its own chance are weighted by it instead"
            )
        result = weighted_pass_rate(
            outcomes, human, use.inclusion, confidence=confidence, n_resamples=resamples, seed=seed
        )  # fmt: skip
    else:
        result = corrected_pass_rate(
            outcomes,
            human,
            confidence=confidence,
            n_resamples=resamples,
            seed=seed,
            strata=read.categories if strata is not None or use is not None and use.estimator == "stratified" else None,
            strata_by="category",
            drawn_by_stratum=use is not None and use.estimator == "stratified",
        )
    if use is not None and use.estimator == "simple":
        notes.append("the labelled items were drawn as a simple random sample (recorded selection): every figure holds")
    return result.model_copy(
        update={
            "run_id": run_row["id"],
            "dataset_hash": run_row["dataset_hash"],
            "warnings": warnings,
            "notes": [*notes, *result.notes],
            **({} if identity is None else {"identity": identity}),
            **({} if guess is None else {"kind_guess": KindGuess(kind=guess[0], guessed_from=guess[1])}),
            **({} if use is None else {"weighting": use.estimator}),
        }
    )


@dataclass
class PassRateInputs:
    """What a corrected pass rate reads: the run's case outcomes, people's PASS shares, each case's category."""

    outcomes: dict[str, CaseOutcome]
    human: dict[str, float]
    categories: dict[str, str]
    run_row: dict[str, Any]
    warnings: list[str]
    notes: list[str]
    identity: Any
    kind_guess: tuple[str, str] | None
    draw: LabelDraw | None = None  # the draw the labels' own fields name (juge label export), if any


def read_pass_rate(
    run: str | Run,
    labels: Source | None = None,
    *,
    db: str | Path | None = None,
    threshold: float | None = None,
    label_threshold: float | None = None,
    labels_map: Mapping[str, str] | None = None,
    scale: Mapping[str, Any] | None = None,
    kind: Literal["score", "passfail"] | None = None,
    missing: Iterable[str] = (),
    format: str | None = None,
    source: StudySource | None = None,
    against: str | Path | None = None,
    force: bool = False,
) -> PassRateInputs:
    """Read a stored run and pass/fail labels on some of its cases, as ``juge estimate`` (and ``juge plan``) do."""
    import dataclasses

    from juge.calibration.inputs import NO_SPLIT_NOTICE
    from juge.calibration.source import read_study, study_source
    from juge.errors import InputError
    from juge.runs.corrected import human_pass_shares
    from juge.runs.verdicts import run_outcomes, run_threshold
    from juge.store import open_store

    if source is None:
        source = study_source(
            labels=labels, labels_map=labels_map, scale=scale, kind=kind, missing=missing, format=format
        )  # fmt: skip
    elif labels is not None:
        source = dataclasses.replace(source, labels=study_source(labels=labels).labels)
    if source.labels is None:
        raise InputError("give --labels FILE: human labels (item_id, rater_id, label) on some of the run's cases")
    if source.kind == "pairwise":
        raise InputError("--kind pairwise: juge estimate needs pass/fail labels (A/B/tie labels have no pass rate)")
    with open_store(db, must_exist=True) as store:
        run_row = store.get_run(run if isinstance(run, str) else run.run_id)
        threshold = run_threshold(run_row["config"], threshold)
        cases = store.run_cases(run_row["id"])
        judgments = store.judgments(run_row["id"])
        identity = None
        if against is not None:
            from juge.judges.identity import check_runs_against

            identity = check_runs_against(against, {run_row["id"]: judgments}, force=force, command="juge estimate")
        outcomes, _ = run_outcomes(
            cases,
            judgments,
            store.check_results(run_row["id"]),
            run_row["config"],
            threshold=threshold,
        )
    inputs = read_study(dataclasses.replace(source, items=None, run=run_row["id"], db=db), lean=False)
    warnings = [w + " (the labels left may not be a random sample of the run's cases)" for w in inputs.warnings]
    if identity is not None and identity.warning:
        warnings.insert(0, identity.warning)
    notes = [n for n in inputs.notices if not n.startswith(NO_SPLIT_NOTICE)]  # a split means nothing here
    # People's scores (other than 0/1) pass at the judge's threshold unless told otherwise, as in juge tune.
    human = human_pass_shares(inputs.data.labels, threshold=label_threshold, judge_threshold=threshold)
    return PassRateInputs(
        outcomes=dict(outcomes),
        human=human,
        categories={c.id: c.category or "" for c in cases},
        run_row=run_row,
        warnings=warnings,
        notes=notes,
        identity=identity,
        kind_guess=inputs.kind_guess,
        draw=inputs.draw,
    )


ESTIMATORS = {"random": "simple", "stratified": "stratified", "decisive": "inverse-probability"}


@dataclass
class SelectionUse:
    """How labels drawn by a recorded selection must be estimated (:func:`selection_estimator`)."""

    method: str
    estimator: Literal["simple", "stratified", "inverse-probability"]
    inclusion: dict[str, float]  # inverse-probability: each drawn case's chance, by id


def selection_estimator(
    selection: str | Path | Mapping[str, Any], categories: Mapping[str, str], human: Mapping[str, float]
) -> SelectionUse:
    """The one rule for which estimator labels drawn by ``selection`` (what ``juge label init --select ... --json``
    recorded, the file or its ``selection``) need: a simple random sample, every estimator as it is (``simple``);
    drawn by category, stratified PPI++ with each category weighted by its share of the cases (``stratified``);
    drawn each with its own chance, every figure weighted by the inverse of the chance (``inverse-probability``).
    Checks that the labels are of this draw: a labelled case of a category the selection did not draw from, or with
    no recorded chance, or a run of more cases than the selection drew from (cases that had no chance) is refused."""
    from juge.data.draw import read_selection

    where, data = read_selection(selection, "selection")
    method = str(data["method"])
    estimator = ESTIMATORS[method]
    inclusion: dict[str, float] = {}
    if estimator == "stratified":
        drawn_from = {str(s.get("stratum")) for s in data.get("strata") or [] if isinstance(s, Mapping)}
        for item in human:
            category = categories.get(item) or "(none)"
            if item in categories and category not in drawn_from:
                raise InputError(
                    f"{where}: labelled item {item!r} is of category {category!r}, which the selection did not draw "
                    f"from ({', '.join(sorted(drawn_from))}): these labels were not drawn by this selection"
                )
    if estimator == "inverse-probability":
        recorded = data.get("probabilities")
        if not isinstance(recorded, Mapping):
            raise InputError(f"{where}: a {method} selection without its probabilities (each drawn case's chance)")
        inclusion = {str(k): float(v) for k, v in recorded.items() if isinstance(v, int | float)}
        # A chance outside (0, 1] (a file edited by hand) weights its label by 1 / chance into a pass rate above 1
        # or below 0; NaN is left to the "no recorded chance" refusal.
        bad = next(((k, v) for k, v in inclusion.items() if v > 1 or v <= 0 or v == float("inf")), None)
        if bad is not None:
            raise InputError(
                f"{where}: field 'probabilities.{bad[0]}': a chance of being drawn must be above 0 and at most 1, "
                f"got {bad[1]:g}"
            )
        population = data.get("population")
        if isinstance(population, int) and len(categories) > population:
            raise InputError(
                f"{where}: the run has {len(categories)} cases, the selection drew from {population}: the others had "
                "no chance of being labelled, so no weighting makes the estimate cover them; estimate a run over the "
                "cases the selection drew from"
            )
    return SelectionUse(method=method, estimator=estimator, inclusion=inclusion)  # type: ignore[arg-type]
