"""Gather a study's inputs from files or a stored run, and run the right study on them.

This is what `juge calibrate` calls; it decides the layout of the items file and the
kind of study (pairwise, single score, PASS/FAIL) and writes the JSON atomically.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Literal, overload

from juge.calibration.grades import Kind as GradeKind
from juge.calibration.grades import Truth, build_grade_table, grade_study, is_score
from juge.calibration.grades import _read_value as grade_value
from juge.calibration.pairtable import build_pair_table
from juge.calibration.pairwise import Bootstrap, pairwise_study
from juge.calibration.results import Calibration, InputCounts
from juge.calibration.results import Truth as TruthPart
from juge.data.adapters import (
    CalibrationData,
    read_labelled_items,
    read_mtbench_human_judgments,
    read_pairwise_items,
)
from juge.data.draw import LabelDraw, label_draw
from juge.data.judgments import JudgmentsSource, read_judgments_source
from juge.data.labels import (
    LABEL_EXTRAS,
    LabelCounts,
    RawVote,
    WeightRule,
    aggregate_votes,
    convert_votes,
    decide_kind,
    guess_kind,
    is_missing,
    judge_kinds,
    long_votes,
    missing_by_pattern,
    normalise_passfail,
    scale_kind,
    split_list,
    unlisted,
)
from juge.data.readers import (
    CASE_FIELDS,
    Source,
    as_path,
    as_text_note,
    cases_from_rows,
    file_format,
    header_note,
    is_in_memory,
    iter_rows,
    mapped_rows,
    quotes_cells,
    read_cases,
    row_id_note,
    source_hash,
    source_name,
    unnamed,
    with_quoting,
)
from juge.data.records import Case, HumanLabel, Judgment, PairSummary, RecordedCall, Vote
from juge.data.results import KindGuess
from juge.errors import InputError, input_error

StudyKind = Literal["pairwise", "score", "passfail"]
LABEL_FIELDS = tuple(HumanLabel.model_fields)


NO_SPLIT_NOTICE = "the items carry no split"


class NotPairs(InputError):
    """A pairwise study was asked for items that do not hold two answers each."""


@dataclass
class StudyInputs:
    """Everything a study reads: items and human labels, in-item baselines, and judgments (those of a
    stored run as Judgments, those read from files as compact RecordedCalls)."""

    kind: StudyKind
    data: CalibrationData
    judgments: list[Judgment | RecordedCall] = field(default_factory=list)
    has_splits: bool = False
    notices: list[str] = field(default_factory=list)
    declared_scale: tuple[float, float] | None = None
    warnings: list[str] = field(default_factory=list)
    counts: LabelCounts = field(default_factory=LabelCounts)
    criteria: dict[str, list[HumanLabel]] | None = None  # several criteria: one label set each
    criterion_counts: dict[str, LabelCounts] = field(default_factory=dict)  # each criterion's own; summed in counts
    kind_guess: tuple[StudyKind, str] | None = None  # the kind when it was guessed, and from what
    draw: LabelDraw | None = None  # the draw the labels come from (label init --select), None: none recorded


def _is_sample_layout(items: Source, format: str | None = None) -> bool:
    if not is_in_memory(items) and file_format(as_path(items), format) not in ("jsonl", "json"):
        return False
    rows = iter_rows(items, format=format)
    try:
        return "human_ratings" in next(rows)[1]
    finally:
        rows.close()


def load_inputs(
    *,
    items: Source | None = None,
    judgments: Sequence[Path | str | JudgmentsSource] = (),
    labels: Source | None = None,
    from_hf: Path | None = None,
    turn: int = 1,
    run: str | None = None,
    db: str | Path | None = None,
    kind: StudyKind | None = None,
    label_cols: Sequence[str] = (),
    scale: Mapping[str, Any] | None = None,
    id_col: str = "id",
    output_col: str = "output",
    baseline_cols: Sequence[str] = (),
    judges: Sequence[str] = (),
    templates: Sequence[str] = (),
    lean: bool = False,
    format: str | None = None,
    mapping: Mapping[str, str] | None = None,
    labels_map: Mapping[str, str] | None = None,
    missing: Iterable[str] = (),
    criteria: Mapping[str, Sequence[str]] | None = None,
    labels_nested: str | None = None,
    raters_by: str = "key",
    labels_aggregate: str | None = None,
    label_weights: Sequence[WeightRule] = (),
    panels: Sequence[Any] = (),
    labels_seen_by: str | None = None,
    selection: str | Path | None = None,
) -> StudyInputs:
    """Read items, labels and judgments from the given sources; keep only the chosen judges/templates.

    `items` and `labels` are paths (any shape :func:`juge.data.readers.iter_rows` reads; `format` names it
    when the suffix does not) or records in memory (a list of dicts, a DataFrame); `labels` may be the items
    themselves. `mapping` (``--map``) and `labels_map` (``--labels-map``) rename columns to juge's fields,
    `scale` maps raw label values to the kind's values and `missing` lists the raw values meaning "no label".
    Labels sit in the item rows (`label_cols`, one set of columns per criterion in `criteria`, or a nested
    field `labels_nested`) or in a long file (`labels`). Several criteria give one label set each
    (``StudyInputs.criteria``); the first is ``data.labels``.

    ``lean=True`` (a study, which measures nothing on an item without a human label): items of the
    sample layout that carry no vote are checked but kept only as ids and splits (``data.left_out``),
    and those with votes as PairSummary (no texts), when the votes can only come from the items
    (no --labels, no --run).
    """
    if from_hf is not None and (items is not None or run is not None):
        raise InputError("--from-hf reads items and votes from the dataset; do not combine it with --items or --run")
    if from_hf is None and items is None and run is None:
        raise InputError("nothing to calibrate: give --items FILE, --from-hf DIR or --run RUN_ID (see --help)")
    if labels_aggregate and labels is None:
        raise InputError("--labels-aggregate sums the rows of --labels FILE (one row per error); give --labels")
    if label_cols and criteria:
        raise InputError("give either --label-cols (one criterion) or --criterion NAME=COLS (several), not both")
    if mapping is None and (id_col != "id" or output_col != "output"):
        mapping = {k: v for k, v in (("id", id_col), ("output", output_col)) if v != k}
    missing_set = frozenset(missing)
    counts = LabelCounts()
    recorded: list[Judgment | RecordedCall] = []
    run_outputs: dict[tuple[str, str], dict[str, Any]] = {}
    raw: dict[str | None, list[RawVote]] = {}
    raw_baselines: dict[str, list[RawVote]] = {}
    as_text: dict[str, int] = {}  # numbers and booleans in the items' text fields, read as text
    if from_hf is not None:
        data = read_mtbench_human_judgments(from_hf, turn=turn)
    elif items is not None and (label_cols or criteria or labels_nested):
        read = read_labelled_items(
            items,
            mapping=mapping,
            format=format,
            label_cols=label_cols,
            criteria=criteria,
            labels_nested=labels_nested,
            raters_by=raters_by,
            baseline_cols=baseline_cols,
        )
        data = CalibrationData(list(read.cases), [], {}, {"items": source_hash(items)})
        raw, raw_baselines = read.votes, read.baselines
        as_text.update(read.as_text)
    elif items is not None and not mapping and _is_sample_layout(items, format):
        data = read_pairwise_items(
            items,
            **({"baseline_fields": baseline_cols} if baseline_cols else {}),
            lean=lean and labels is None and run is None,
        )
    elif items is not None and labels is not None and _same_source(items, labels):
        data = CalibrationData(
            _items_of_long_rows(items, mapping, labels_map, format, as_text), [], {}, {"items": source_hash(items)}
        )
    elif items is not None:
        data = CalibrationData(
            list(read_cases(items, mapping, format=format, as_text=as_text)), [], {}, {"items": source_hash(items)}
        )
    else:
        data = CalibrationData([], [], {}, {})
    if run is not None:
        from juge.store import DEFAULT_DB, RunNotFound, open_store

        with open_store(db or DEFAULT_DB) as store:
            try:
                info = store.get_run(run)
            except RunNotFound as exc:
                raise RunNotFound(f"--run: {exc}") from None
            if not data.cases:
                data.cases = store.run_cases(info["id"])
            data.sources[f"run {info['id']} dataset"] = info["dataset_hash"]
            recorded += store.judgments(info["id"])
            run_outputs = store.outputs(info["id"])
            if not data.labels and labels is None and not raw:
                ids = {c.id for c in data.cases}
                data.labels = [lab for lab in store.labels() if lab.item_id in ids]
    notes = (
        [row_id_note(items, mapping), as_text_note(items, as_text), header_note(items, format)]
        if items is not None
        else []
    )
    notices: list[str] = [note for note in notes if note]
    warnings: list[str] = []
    pairs = bool(data.cases) and all(c.is_pair for c in data.cases)
    if kind == "pairwise" and not pairs:
        bad = next(c.id for c in data.cases if not c.is_pair)
        raise NotPairs(
            f"a pairwise study needs two answers per item; item {bad!r} has no output_1/output_2 "
            "(name the answer columns with --map output_1=COLUMN,output_2=COLUMN)"
        )
    if labels is not None:
        same = items is not None and _same_source(items, labels)
        # --format names the items' format; --quoting applies to every CSV/TSV the study reads
        labels_format = format if same else with_quoting(None, "none" if not quotes_cells(format) else None)
        rows = mapped_rows(labels, labels_map, LABEL_FIELDS, format=labels_format, option="--labels-map")
        if labels_aggregate == "sum":
            votes, read_as = aggregate_votes(source_name(labels), rows, label_weights)
            notices.append(read_as)
            if labels_seen_by:
                votes, seen_note = seen_clean(votes, data.cases, labels_seen_by, source_name(labels))
                notices.append(seen_note)
        else:
            votes = long_votes(source_name(labels), rows)
        n_carried = len(data.labels) + sum(len(v) for v in raw.values())
        if n_carried:
            notices.append(
                f"--labels {source_name(labels)}: its {len(votes)} labels replace the {n_carried} human votes "
                "carried by the items"
            )
        raw = {None: votes}
        data.sources["labels"] = source_hash(labels)
    # A pairwise study keeps only the calls it uses, which needs the labels first; any other study reads the
    # calls first, so that the kind of judge they hold decides how labels such as 1/0 are read.
    pairwise_first = kind == "pairwise" or (kind is None and (pairs or scale_kind(scale) == "pairwise"))
    judgment_hashes: dict[str, str] = {}
    if not pairwise_first:
        recorded += _read_judgments(judgments, data, judgment_hashes, keep=None)
    judges_said = judge_kinds(j.verdict for j in recorded if j.outcome == "ok" and j.order is None)
    guess: tuple[StudyKind, str] | None = None
    if raw:
        every = [v for vs in raw.values() for v in vs]
        notices += _pattern_notes(every, missing_set)
        chosen = decide_kind(every, kind=kind, scale=scale, pairs=pairs, missing=missing_set, judges=judges_said)
        if kind is None and not scale:
            guess = (chosen, guess_kind([v.value for v in every if not is_missing(v.value, missing_set)],
                                        pairs=pairs, judges=judges_said)[1])  # fmt: skip
        if chosen == "pairwise" and not pairs and data.cases:
            bad = next(c.id for c in data.cases if not c.is_pair)
            raise NotPairs(
                f"a pairwise study needs two answers per item; item {bad!r} has no output_1/output_2 "
                "(name the answer columns with --map output_1=COLUMN,output_2=COLUMN)"
            )

        def convert(votes: Sequence[RawVote], into: LabelCounts) -> list[HumanLabel]:
            return convert_votes(
                votes, kind=chosen, scale=scale, missing=missing_set, counts=into, kind_given=kind is not None
            )

        # Each criterion counts its own values; the file's counts are their sum.
        criterion_counts = {name: LabelCounts() for name in raw}
        per_criterion = {name: convert(vs, criterion_counts[name]) for name, vs in raw.items()}
        for one in criterion_counts.values():
            counts.values_read += one.values_read
            counts.missing_values += one.missing_values
            counts.duplicate_votes += one.duplicate_votes
        for col, vs in raw_baselines.items():
            data.baselines[col] = {lab.item_id: lab.label for lab in convert(vs, LabelCounts())}
        by_rule = unlisted(every, scale, missing_set)
        if by_rule:
            notices.append(
                f"--scale does not list {', '.join(by_rule[:6])}{', ...' if len(by_rule) > 6 else ''}: "
                f"read as {chosen} values by the standard spellings"
            )
        kind = chosen
        data.labels = list(next(iter(per_criterion.values())))
        if labels is not None:
            notices += _check_label_ids(source_name(labels), data.labels, data.cases, counts, items is not None)
        else:
            counts.unknown_item = 0
    else:
        per_criterion = {}
        criterion_counts = {}
    if pairwise_first:
        pairwise = kind == "pairwise" or (kind is None and pairs)
        keep = calls_a_pair_study_uses(data.labels) if pairwise else None
        recorded += _read_judgments(judgments, data, judgment_hashes, keep=keep)
    data.sources.update(judgment_hashes)  # after the labels', as the files are named
    if not data.labels:
        raise InputError(
            "no human labels: the items carry none; give --labels FILE (item_id, rater_id, label)"
            + (" or --label-cols" if items is not None else "")
        )
    data.labels, mismatch, unhashed = labels_on_these_outputs(
        data.labels,
        with_run_outputs(data.cases, run_outputs),
        source=f"--labels {source_name(labels)}" if labels is not None else "labels",
    )
    warnings += mismatch
    if run is not None:
        notices += unhashed
    for panel in panels:  # before --judge keeps judges: a panel may be kept without its members
        from juge.calibration.panel import panel_calls

        recorded += panel_calls(recorded, panel)
    if judges:
        present = sorted({j.judge for j in recorded} | set(data.baselines))
        unknown = [name for name in judges if name not in present]
        if unknown:
            raise InputError(
                f"--judge {unknown[0]}: no judgment by that judge (present: {', '.join(present) or 'none'})"
            )
        recorded = [j for j in recorded if j.judge in judges]
        data.baselines = {k: v for k, v in data.baselines.items() if k in judges}
    if templates:
        present = sorted({j.template for j in recorded})
        unknown = [name for name in templates if name not in present]
        if unknown:
            raise InputError(
                f"--template {unknown[0]}: no judgment with that template (present: {', '.join(present) or 'none'})"
            )
        recorded = [j for j in recorded if j.template in templates]
    if kind is None:
        kind, why = guess_kind((lab.label for lab in data.labels), pairs=pairs, judges=judges_said)
        guess = (kind, why)
        if kind == "passfail":  # labels kept as read (a store's, 1.0/0.0): read as PASS/FAIL
            data.labels = [_as_passfail(lab) for lab in data.labels]
    if guess is not None and guess[0] == "pairwise":
        guess = None  # two answers per item: the items' shape says pairwise, no guess about the labels
    if guess is not None:
        notices.insert(0, f"a {guess[0]} study, guessed because {guess[1]} (--kind sets it)")
    if kind in ("score", "passfail") and not (len(per_criterion) > 1 or labels_nested):
        recorded, dropped = _keep_judges_of_kind(kind, recorded)
        notices += dropped
    numbers = [v for v in (scale or {}).values() if isinstance(v, int | float)]
    declared = (min(numbers), max(numbers)) if numbers and kind == "score" else None
    has_splits = bool(_splits(data))
    if not has_splits and from_hf is None:
        notices.append(
            f"{NO_SPLIT_NOTICE}: every item is studied (--split all). A policy needs a dev/holdout split: "
            "juge split --items FILE --by group --holdout 0.3 -o items-split.jsonl"
        )
    draw = label_draw(
        [lab for lab in data.labels if isinstance(lab, HumanLabel)],
        selection=selection,
        categories={c.id: c.category for c in data.cases},
    )
    return StudyInputs(
        kind,
        data,
        recorded,
        draw=draw,
        has_splits=has_splits,
        notices=notices,
        declared_scale=declared,
        warnings=warnings,
        counts=counts,
        criteria={str(k): v for k, v in per_criterion.items()} if len(per_criterion) > 1 or labels_nested else None,
        criterion_counts={str(k): v for k, v in criterion_counts.items()},
        kind_guess=guess,
    )


def seen_clean(
    votes: list[RawVote], cases: Sequence[Case | PairSummary], column: str, path: str
) -> tuple[list[RawVote], str]:
    """Add a score of 0 for each rater an item's `column` lists (``--labels-seen-by``: a JSON list or
    comma-separated names) who has no error row on it: they saw the item and marked nothing."""
    have = {(v.item_id, v.rater_id) for v in votes}
    added: list[RawVote] = []
    found = False
    for case in cases:
        listed = case.meta.get(column) if isinstance(case, Case) else None
        if listed is None:
            continue
        found = True
        names = listed if isinstance(listed, list) else split_list(str(listed).strip("[]"))
        for rater in (str(n).strip() for n in names):
            if rater and (case.id, rater) not in have:
                have.add((case.id, rater))
                added.append(RawVote(case.id, rater, "0", path, 0, column))
    if not found:
        raise InputError(f"--labels-seen-by {column}: no item has that field (it names the raters who saw each item)")
    return [*votes, *added], f"--labels-seen-by {column}: {len(added)} (item, rater) pairs with no error row score 0"


def _pattern_notes(votes: Sequence[RawVote], missing: frozenset[str]) -> list[str]:
    """What the --missing patterns (N/A*, re:...) left out, the most common values first, so a pattern that
    catches too much shows."""
    matched = missing_by_pattern((v.value for v in votes), missing)
    if not matched:
        return []
    common = sorted(matched.items(), key=lambda kv: (-kv[1], kv[0]))
    shown = ", ".join(f"{value!r} {n}" for value, n in common[:5]) + (", ..." if len(common) > 5 else "")
    return [
        f"--missing patterns left out {sum(matched.values())} label values ({len(matched)} distinct: {shown}); "
        "they are counted as missing"
    ]


def _as_passfail(label: HumanLabel | Vote) -> HumanLabel | Vote:
    word = normalise_passfail(label.label)
    if word is None or word == label.label:
        return label
    return label._replace(label=word) if isinstance(label, Vote) else label.model_copy(update={"label": word})


def _read_judgments(
    judgments: Sequence[Path | str | JudgmentsSource],
    data: CalibrationData,
    hashes: dict[str, str],
    *,
    keep: Callable[[Judgment | RecordedCall], bool] | None,
) -> list[Judgment | RecordedCall]:
    """The recorded calls of every judgments source (those `keep` says a pairwise study uses); each source's
    hash goes into `hashes`."""
    pair_ids = {c.id for c in data.cases if c.is_pair} | data.left_out.ids
    recorded: list[Judgment | RecordedCall] = []
    for k, source in enumerate(judgments):
        calls, sha = read_judgments_source(source, pair_ids=pair_ids)
        recorded += calls if keep is None else filter(keep, calls)
        hashes["judgments" if k == 0 else f"judgments_{k + 1}"] = sha()
    return recorded


def _same_source(a: Source, b: Source) -> bool:
    if is_in_memory(a) or is_in_memory(b):
        return unnamed(a) is unnamed(b)
    return as_path(a).resolve() == as_path(b).resolve()


def _items_of_long_rows(
    items: Source,
    mapping: Mapping[str, str] | None,
    labels_map: Mapping[str, str] | None,
    format: str | None,
    as_text: dict[str, int] | None = None,
) -> list[Case | PairSummary]:
    """The items of a file that also holds the labels, one row per rater per item: the first row of each
    item id is the item (the rater and label columns are not kept in its meta)."""
    label_columns = {c for theirs in (labels_map or {}).values() for c in theirs.split("+")}
    label_columns |= {"rater_id", "label", *LABEL_EXTRAS} - set((labels_map or {}).values())
    first: dict[Any, tuple[int, dict[str, Any]]] = {}
    for line, row in mapped_rows(items, mapping, CASE_FIELDS, format=format):
        first.setdefault(row.get("id"), (line, row))
    id_columns = {c for c in (mapping or {}).get("id", "id").split("+")}
    return list(
        cases_from_rows(
            source_name(items),
            first.values(),
            drop=label_columns - id_columns - set(mapping or {}),
            id_mapped=bool(mapping and "id" in mapping),
            as_text=as_text,
        )
    )


def calls_a_pair_study_uses(labels: Iterable[HumanLabel | Vote]) -> Callable[[Judgment | RecordedCall], bool]:
    """Which recorded calls a pairwise study keeps in memory, as a filter over the calls in file order.

    The study's table holds only items with a human label, so of the calls on other items it needs none
    but the first of each (judge, template, model, template hash) -- these keep the judge list, its order,
    the versions it reports and the --judge/--template checks as they are with every call -- and any call
    without an order (the table refuses it). Every call is still read and checked.
    """
    labelled = {lab.item_id for lab in labels}
    versions: set[tuple[str, str, str, str]] = set()

    def keep(call: Judgment | RecordedCall) -> bool:
        if call.item_id in labelled or call.order is None:
            return True
        version = (call.judge, call.template, call.model, call.template_hash)
        if version in versions:
            return False
        versions.add(version)
        return True

    return keep


@overload
def with_run_outputs(cases: Sequence[Case], run_outputs: dict[tuple[str, str], dict[str, Any]]) -> list[Case]: ...


@overload
def with_run_outputs(
    cases: Sequence[Case | PairSummary], run_outputs: dict[tuple[str, str], dict[str, Any]]
) -> list[Case | PairSummary]: ...


def with_run_outputs(
    cases: Sequence[Case | PairSummary], run_outputs: dict[tuple[str, str], dict[str, Any]]
) -> list[Case | PairSummary] | list[Case]:
    """The cases as the run judged them: a run with a [system] generated each case's `output`, stored in
    ``Store.outputs(run_id)[(item_id, "output")]["text"]``; that text replaces the case record's output."""
    filled: list[Case | PairSummary] = []
    for case in cases:
        row = run_outputs.get((case.id, "output"))
        text = row.get("text") if row else None
        filled.append(_full(case).model_copy(update={"output": text}) if text else case)
    return filled


def _full(case: Case | PairSummary) -> Case:
    """The case with its texts; a pair read lean (a PairSummary) has none to give."""
    if isinstance(case, PairSummary):
        raise TypeError(f"item {case.id!r} was read without its answers (a lean read)")
    return case


def labels_on_these_outputs(
    labels: Sequence[HumanLabel | Vote],
    cases: Sequence[Case | PairSummary],
    *,
    source: str = "labels",
) -> tuple[list[HumanLabel | Vote], list[str], list[str]]:
    """Keep the labels made on the answers these cases hold; return ``(kept, warnings, notes)``.

    A label carrying ``output_hash`` (``Case.output_hash()`` of what the person saw) is kept only when
    it equals the hash of the case with the same id: a label on an older answer says nothing about
    a new one. The left-out labels are counted, with a few ids, in one warning. Labels without a hash
    are kept, with one note that they cannot be checked. Labels on ids that are no case pass through
    (the caller reports them). Raises InputError when every label is left out.
    """
    hashes = {c.id: _full(c).output_hash() for c in cases} if any(lab.output_hash is not None for lab in labels) else {}

    def stale(lab: HumanLabel | Vote) -> bool:
        return lab.output_hash is not None and lab.item_id in hashes and lab.output_hash != hashes[lab.item_id]

    kept = [lab for lab in labels if not stale(lab)]
    warnings: list[str] = []
    if len(kept) < len(labels):
        ids = sorted({lab.item_id for lab in labels if stale(lab)})
        examples = ", ".join(repr(i) for i in ids[:3]) + (", ..." if len(ids) > 3 else "")
        what = (
            f"{source}: {len(labels) - len(kept)} labels on {len(ids)} items were made on other answers than "
            f"these cases' outputs (their output_hash differs: {examples})"
        )
        if not kept:
            raise InputError(f"{what}; no label is left: label the outputs under study")
        warnings.append(f"{what}; they are left out")
    unhashed = sum(lab.output_hash is None for lab in kept)
    notes = (
        [
            f"{source}: {unhashed} of {len(kept)} labels carry no output_hash, so juge cannot check they were "
            "made on these outputs"
        ]
        if unhashed
        else []
    )
    return kept, warnings, notes


def _keep_judges_of_kind(
    kind: GradeKind, recorded: list[Judgment | RecordedCall]
) -> tuple[list[Judgment | RecordedCall], list[str]]:
    """Leave out judges none of whose answered calls is a grade of this study (e.g. per-criterion scores in a
    PASS/FAIL study): they would show as all 'missing'. One notice per judge left out, naming it."""
    graded: dict[tuple[str, str], bool] = {}
    example: dict[tuple[str, str], Any] = {}
    for j in recorded:
        key = (j.judge, j.template)
        if j.outcome != "ok" or j.order is not None:
            graded.setdefault(key, False)
            continue
        is_grade = grade_value(kind, j.verdict) is not None or (kind == "passfail" and is_score(j.verdict))
        graded[key] = graded.get(key, False) or is_grade
        example.setdefault(key, j.verdict)
    foreign = {key for key, ok in graded.items() if not ok and key in example}
    what = "PASS/FAIL" if kind == "passfail" else "a number"
    notices = [
        f"judge {judge}/{template} is left out of this {kind} study: its verdicts are not {what} "
        f"(e.g. {str(example[(judge, template)])[:80]})"
        for judge, template in sorted(foreign)
    ]
    return [j for j in recorded if (j.judge, j.template) not in foreign], notices


def _check_label_ids(
    path: str,
    labels: Sequence[HumanLabel | Vote],
    cases: Sequence[Case | PairSummary],
    counts: LabelCounts,
    items_given: bool,
) -> list[str]:
    """Count (and note) labels on ids that match no item; an error when none of them matches an item."""
    ids = {c.id for c in cases}
    unmatched = sorted({lab.item_id for lab in labels} - ids)
    if not unmatched or not labels or not cases:
        return []
    n_rows = sum(lab.item_id not in ids for lab in labels)
    counts.unknown_item += n_rows
    examples = ", ".join(repr(i) for i in unmatched[:3]) + (", ..." if len(unmatched) > 3 else "")
    if n_rows == len(labels):
        sample = ", ".join(repr(c.id) for c in list(cases)[:3]) or "none"
        raise input_error(
            path,
            f"no label's item_id matches an item (labels name {examples}; "
            f"items are {sample}{', ...' if len(cases) > 3 else ''}); map the item key with "
            "--labels-map item_id=COLUMN (or a composite, item_id=doc+system)"
            + (" and the items' with --map id=..." if items_given else ""),
            field="item_id",
        )
    return [
        f"--labels {path}: {n_rows} labels on {len(unmatched)} item ids that match no item are left out ({examples})"
    ]


def _splits(data: CalibrationData) -> set[str]:
    """The splits the items are in, those left out included."""
    return {c.split for c in data.cases if c.split} | data.left_out.splits


def other_splits_notice(splits: Iterable[str]) -> str:
    """The note for a split column that holds neither dev nor holdout (train/valid/test, ...)."""
    names = sorted(splits)
    return (
        f"the items' split column holds {', '.join(names)} (neither dev nor holdout): every item is studied "
        f"(--split all); study one with --split {names[-1] if 'test' not in names else 'test'}. "
        "A policy needs dev/holdout: juge split --items FILE --by group --holdout 0.3 -o items-split.jsonl"
    )


def default_split(inputs: StudyInputs, split: str | None) -> str:
    """The split to study: as given (any value the items' split column holds, or `all`), else `dev` when the
    items carry dev or holdout, else all items (a column of other values, e.g. train/valid/test, is noted)."""
    if split is not None:
        splits = _splits(inputs.data)
        if split != "all" and split not in splits:
            present = sorted(splits) or ["none"]
            raise InputError(
                f"--split {split}: no item is in that split (splits present: {', '.join(present)}); "
                "use --split all to study every item"
            )
        return split
    return "dev" if _splits(inputs.data) & {"dev", "holdout"} else "all"


def run_study(
    inputs: StudyInputs,
    *,
    split: str,
    boot: Bootstrap = Bootstrap(),
    truth: Truth = "each",
    threshold: float | None = None,
    progress: Callable[[str, int, int], None] | None = None,
) -> Calibration:
    """Build the per-item table and compute the study (the inputs' notices lead its notes).

    Several criteria (``inputs.criteria``) give ``{"kind": "criteria", "criteria": {name: study},
    "side_by_side": [...]}``. Refuses (InputError) a study with no item: no item of the split carries a
    human label.
    """
    splits = _splits(inputs.data)
    if split == "all" and splits and not splits & {"dev", "holdout"}:
        inputs = replace(inputs, notices=[other_splits_notice(splits), *inputs.notices])
    if inputs.criteria:
        result = _criteria_study(inputs, split=split, boot=boot, truth=truth, threshold=threshold, progress=progress)
    else:
        result = _one_study(inputs, split=split, boot=boot, truth=truth, threshold=threshold, progress=progress)
        result.counts = InputCounts.model_validate(input_counts(inputs, inputs.data.labels))
        result.notes = [*inputs.warnings, *inputs.notices, *result.notes]
    if inputs.kind_guess is not None:
        result.kind_guess = KindGuess(kind=inputs.kind_guess[0], guessed_from=inputs.kind_guess[1])
    result._input_warnings = list(inputs.warnings)
    return result


def input_counts(
    inputs: StudyInputs, labels: Sequence[HumanLabel | Vote], counts: LabelCounts | None = None
) -> dict[str, int]:
    """Every item and label value accounted for: read, without a label, missing, on an unknown item, duplicate.

    `counts` are the label values' counts to report (one criterion's); the whole input's by default."""
    data = inputs.data
    ids = {c.id for c in data.cases} | data.left_out.ids
    labelled = {lab.item_id for lab in labels}
    counts = inputs.counts if counts is None else counts
    return {
        "items_read": len(ids),
        "items_without_label": len(ids - labelled),
        "label_values_read": counts.values_read or len(labels),
        "missing_values": counts.missing_values,
        "labels_unknown_item": counts.unknown_item,
        "duplicate_votes": counts.duplicate_votes,
    }


def _one_study(
    inputs: StudyInputs,
    *,
    split: str,
    boot: Bootstrap,
    truth: Truth,
    threshold: float | None,
    progress: Callable[[str, int, int], None] | None,
) -> Calibration:
    data = inputs.data
    if inputs.kind == "pairwise":
        if truth not in ("each", "gold") or threshold is not None:
            raise InputError(
                "--truth (but gold) and --threshold apply to single-score and PASS/FAIL studies, not to pairs"
            )
        try:
            table = build_pair_table(
                data.cases, data.labels, inputs.judgments, baselines=data.baselines, sources=data.sources
            )
        except ValueError as exc:
            raise InputError(str(exc)) from None
        pair_items = table.split(split).items
        _refuse_empty(len(pair_items), split, inputs)
        gold = _gold(truth, [len(it.votes) for it in pair_items], [it.item_id for it in pair_items])
        study = pairwise_study(table, split=split, boot=boot, progress=progress)
        if gold:
            study.truth = TruthPart(mode="gold", n_items=len(pair_items))
            study.notes = [GOLD_NOTE, *(n for n in study.notes if not n.startswith("The ceiling is person vs"))]
        return study
    read_at: list[str] = []
    judgments = inputs.judgments
    if inputs.kind == "passfail":
        judgments, read_at = scores_as_passfail(inputs.judgments, threshold)
    grades = build_grade_table(
        inputs.kind,
        data.cases,
        data.labels,
        judgments,
        baselines=data.baselines,
        sources=data.sources,
        declared_scale=inputs.declared_scale,
    )
    graded = grades.split(split).items
    _refuse_empty(len(graded), split, inputs)
    if _gold(truth, [len(it.ratings) for it in graded], [it.item_id for it in graded]):
        truth = "gold"
    result = grade_study(grades, split=split, truth=truth, threshold=threshold, boot=boot, progress=progress)
    result.notes = [*read_at, *result.notes, *([GOLD_NOTE] if truth == "gold" else [])]
    return result


#: What a study on one label per item says instead of comparing with a ceiling.
GOLD_NOTE = (
    "One label per item (gold labels): the judge is measured against them, and no person-vs-person ceiling "
    "can be measured, so whether the judge stands in for a person is not known. To learn it, have a second "
    "person label a sample of the items (e.g. 50: juge label init, or a second label column) and calibrate again."
)


def _gold(truth: Truth, n_labels: Sequence[int], ids: Sequence[str]) -> bool:
    """Whether a study is one on gold labels: `--truth gold` (every item must then hold one label, else an
    error naming one that does not), or every item holding exactly one label."""
    if truth == "gold":
        several = next((k for k, n in enumerate(n_labels) if n > 1), None)
        if several is not None:
            raise InputError(
                f"--truth gold reads one label per item; item {ids[several]!r} has {n_labels[several]} "
                "(use --truth each, mean or agree for several raters)"
            )
        return True
    return truth == "each" and bool(n_labels) and all(n == 1 for n in n_labels)


def criterion_judgments(judgments: Sequence[Judgment | RecordedCall], criterion: str) -> list[Judgment | RecordedCall]:
    """The calls as one criterion's study reads them: a verdict holding one value per criterion (a criteria
    judge) gives its value for this criterion (calls lacking it are left out); any other verdict is kept."""
    out: list[Judgment | RecordedCall] = []
    for j in judgments:
        if isinstance(j.verdict, dict):
            if criterion not in j.verdict:
                continue
            j = (
                j._replace(verdict=j.verdict[criterion])
                if isinstance(j, tuple)
                else j.model_copy(update={"verdict": j.verdict[criterion]})
            )
        out.append(j)
    return out


def _criteria_study(
    inputs: StudyInputs,
    *,
    split: str,
    boot: Bootstrap,
    truth: Truth,
    threshold: float | None,
    progress: Callable[[str, int, int], None] | None,
) -> Calibration:
    studies: dict[str, Calibration] = {}
    notes: list[str] = [*inputs.warnings, *inputs.notices]
    for name, labels in (inputs.criteria or {}).items():
        judgments = criterion_judgments(inputs.judgments, name)
        if inputs.kind in ("score", "passfail"):
            judgments, dropped = _keep_judges_of_kind(inputs.kind, judgments)
            notes += [f"{name}: {d}" for d in dropped]
        one = replace(inputs, data=replace(inputs.data, labels=list(labels)), judgments=judgments, criteria=None)
        if not labels:
            notes.append(f"criterion {name!r} has no human label: no study")
            continue
        study = _one_study(one, split=split, boot=boot, truth=truth, threshold=threshold, progress=progress)
        study.counts = InputCounts.model_validate(input_counts(inputs, labels, inputs.criterion_counts.get(name)))
        studies[name] = study
    if not studies:
        raise InputError("nothing to study: no criterion has a human label")
    first = next(iter(studies.values()))
    return Calibration.model_validate(
        {
            "kind": "criteria",
            "criterion_kind": inputs.kind,
            "split": first.split,
            "criteria": studies,
            "side_by_side": side_by_side({name: study.to_dict() for name, study in studies.items()}),
            "counts": input_counts(inputs, [lab for labs in (inputs.criteria or {}).values() for lab in labs]),
            "bootstrap": first.bootstrap,
            "notes": notes,
        }
    )


def side_by_side(studies: Mapping[str, dict[str, Any]]) -> list[dict[str, Any]]:
    """One row per criterion: items, votes, the people's ceiling and each judge's agreement with each person."""
    rows = []
    for name, study in studies.items():
        ceiling = study.get("ceiling", {})
        judges = {}
        for key, figures in study.get("judges", {}).items():
            vs = figures.get("vs_people", figures)
            judges[key] = {"agreement": vs.get("agreement"), "kappa": vs.get("kappa")}
        rows.append(
            {
                "criterion": name,
                "n_items": study.get("n_items"),
                "n_votes": study.get("n_votes"),
                "ceiling": {k: ceiling.get(k) for k in ("agreement", "kappa", "krippendorff_alpha")},
                "judges": judges,
            }
        )
    return rows


def scores_as_passfail(
    judgments: Sequence[Judgment | RecordedCall], threshold: float | None
) -> tuple[list[Judgment | RecordedCall], list[str]]:
    """A score judge in a PASS/FAIL study: each score >= `threshold` is PASS, below it FAIL.

    Without a threshold the study is refused (InputError): a score is not a PASS/FAIL, and reading
    score 1, the worst, as PASS (as "1" reads in a labels file) would invert the judge.
    """
    scorers = sorted({(j.judge, j.template) for j in judgments if j.outcome == "ok" and is_score(j.verdict)})
    if not scorers:
        return list(judgments), []
    if threshold is None:
        judge, template = scorers[0]
        example = next(j.verdict for j in judgments if (j.judge, j.template) == scorers[0] and is_score(j.verdict))
        raise InputError(
            f"judge {judge}/{template} gives scores (e.g. {example}) and the human labels are PASS/FAIL: "
            "give --threshold N to read a score >= N as PASS (below N as FAIL)"
        )

    def read(j: Judgment | RecordedCall) -> Judgment | RecordedCall:
        if j.outcome != "ok" or not is_score(j.verdict):
            return j
        value = j.verdict["score"] if isinstance(j.verdict, dict) else j.verdict
        assert isinstance(value, (int, float))  # is_score said so
        verdict = "PASS" if float(value) >= threshold else "FAIL"
        return j._replace(verdict=verdict) if isinstance(j, RecordedCall) else j.model_copy(update={"verdict": verdict})

    notes = [
        f"judge {judge}/{template}: a score >= {threshold:g} is read as PASS, below as FAIL"
        for judge, template in scorers
    ]
    return [read(j) for j in judgments], notes


def _refuse_empty(n_items: int, split: str, inputs: StudyInputs) -> None:
    if n_items:
        return
    splits = sorted(_splits(inputs.data))
    where = "" if split in (None, "all") else f" in split {split!r}"
    present = f"; splits present: {', '.join(splits)}" if where and splits else ""
    n_read = len(inputs.data.cases) + len(inputs.data.left_out.ids)
    raise InputError(
        f"nothing to study: no item{where} has a human label ({n_read} items, "
        f"{len(inputs.data.labels)} labels read{present}); check the labels' item_id and the items' split"
    )
