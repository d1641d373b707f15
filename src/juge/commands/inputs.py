"""The input options every command that reads items, judgments or labels shares, declared once.

``@reads_inputs(...)`` adds the named options to a command (its ``--help`` lists them like its own) and hands
the command one :class:`~juge.calibration.source.StudySource` (``source``) with them parsed; the command adds
its files (``dataclasses.replace(source, items=..., labels=...)``). A new input option is one entry here and
one field of StudySource. README "Input options" documents them in one table.
"""

from __future__ import annotations

import dataclasses
import functools
import inspect
from collections.abc import Callable
from dataclasses import dataclass
from typing import Annotated, Any, TypeVar

import typer

F = TypeVar("F", bound=Callable[..., Any])


@dataclass(frozen=True)
class InputOption:
    """One shared option: its command-line flag and help, and the StudySource field it fills."""

    flag: str
    help: str


INPUT_OPTIONS: dict[str, InputOption] = {
    "map": InputOption(
        "--map",
        "Columns of the items as juge's fields, e.g. id=row,output_1=left,output_2=right (+ joins columns: "
        "id=doc+system).",
    ),
    "id": InputOption(
        "--id",
        "Where an item's id comes from: a column, or `row` for a file with no id: the file name and the row "
        "number (items:3 is the 3rd record), stable while the rows keep their order. Same as --map id=@row.",
    ),
    "labels_map": InputOption(
        "--labels-map",
        "Columns of --labels as juge's fields, e.g. item_id=doc+system,rater_id=worker,label=verdict.",
    ),
    "labels_nested": InputOption(
        "--labels-nested",
        "An item field holding one object per rater, each key a criterion (a rater_id/worker key names the "
        "rater): one study per criterion.",
    ),
    "raters_by": InputOption(
        "--raters-by",
        "With --labels-nested: key (default: an entry's rater_id/worker key, else its position) or position (the "
        'position in each list is the rater, e.g. {"Overall": [4, 3, 5]}: three raters).',
    ),
    "labels_aggregate": InputOption(
        "--labels-aggregate",
        "sum: --labels holds error annotations (one row per error, e.g. MQM); each (item, rater) scores the sum "
        "of its rows' --label-weight (a weight-0 'no error' row says the rater saw the item: score 0).",
    ),
    "label_weight": InputOption(
        "--label-weight",
        "With --labels-aggregate: COLUMN=KEY:WEIGHT,... e.g. severity=Major:5,Minor:1; a key of two columns "
        "joined by + (severity+category=Minor/Fluency/Punctuation:0.1); rules separated by ; are tried in order.",
    ),
    "labels_seen_by": InputOption(
        "--labels-seen-by",
        "With --labels-aggregate: an items column listing the raters who saw each item (a JSON list or "
        "comma-separated); a listed rater with no row on an item scores 0 there.",
    ),
    "label_cols": InputOption("--label-cols", "Columns holding one rater's label each, e.g. rating_1,rating_2."),
    "scale": InputOption(
        "--scale",
        "Raw label values to the kind's values: Bad=1,'Could be Improved'=2 (scores), 0=tie,1=A,2=B (pairwise), "
        "yes=PASS,no=FAIL (passfail). It adds words to the standard ones (pass/fail, yes/no, true/false, 1/0; "
        "A/B/tie); a value neither lists is an error.",
    ),
    "kind": InputOption(
        "--kind",
        "pairwise, score or passfail. Default: from --scale, else pairs -> pairwise, else the labels (1/0 beside "
        "a PASS/FAIL judge: passfail); the output says what was guessed.",
    ),
    "missing": InputOption(
        "--missing",
        'Raw label values that mean "no label", e.g. NULL,NA,"" : left out and counted (empty cells always are). '
        "N/A* is a prefix, re:EXPR a regular expression the whole value matches; quote one holding a comma.",
    ),
    "format": InputOption(
        "--format",
        "Format of the input files when the suffix does not say: jsonl, json, csv, tsv or parquet (gzip is "
        "recognised by its bytes).",
    ),
    "quoting": InputOption(
        "--quoting",
        "CSV/TSV quoting: minimal (default: quotes enclose cells) or none (quotes are plain characters, as many "
        "tools write TSV).",
    ),
    "panel": InputOption(
        "--panel",
        "Judges voting as one: NAME=judge1,judge2,judge3[:majority|unanimous|mean|median[:tie]]; several separated "
        "by ;. The panel is judge NAME/AGGREGATION, its calls its members' (no settled verdict: a person decides; "
        "with :tie a pairwise split is a tie).",
    ),
    "selection": InputOption(
        "--selection",
        "The --json of juge label init --select ... --budget N that drew the labelled items: labels drawn with "
        "unequal chances (decisive, stratified by category) are weighted or refused, never read as a random "
        "sample. Labels exported by juge label export carry their draw already.",
    ),
    "member": InputOption(
        "--member",
        "With an archive (.tar, .tar.gz, .tgz, .zip) as --items: the member to read (default: its one data file). "
        "Any path also takes ARCHIVE::MEMBER.",
    ),
}


#: Every reading option: the commands that read items, judgments and labels as a study take all of them.
STUDY_OPTIONS = tuple(INPUT_OPTIONS)
#: tune: the judge file's setup is the kind (no --kind).
TUNE_OPTIONS = tuple(name for name in INPUT_OPTIONS if name != "kind")
#: report and route read items with --map only (no labels).
ITEM_OPTIONS = ("map", "id")
#: estimate: the run holds the cases (--selection is its own option there); its labels are a long file (no --map,
#: --id, --label-cols, --labels-nested, --raters-by).
ESTIMATE_OPTIONS = (
    "labels_map",
    "labels_aggregate",
    "label_weight",
    "labels_seen_by",
    "scale",
    "kind",
    "missing",
    "format",
    "quoting",
)


def with_files(source: Any, **files: Any) -> Any:
    """`source` with the command's own files (items, judgments, labels, run, db) added, as the API reads them."""
    from juge.calibration.source import study_source

    named = study_source(
        items=files.get("items"), judgments=files.get("judgments"), labels=files.get("labels")
    )  # fmt: skip
    return dataclasses.replace(
        source,
        **{k: v for k, v in files.items() if k not in ("items", "judgments", "labels")},
        items=named.items,
        judgments=named.judgments,
        labels=named.labels,
    )


def reads_inputs(*names: str) -> Callable[[F], F]:
    """Add the shared input options `names` (keys of INPUT_OPTIONS) to a command, which takes them as one
    ``source: StudySource`` keyword instead."""
    unknown = set(names) - set(INPUT_OPTIONS)
    if unknown:
        raise ValueError(f"no shared input option {sorted(unknown)}")

    def decorate(command: F) -> F:
        signature = inspect.signature(command, eval_str=True)  # as typer reads it: Annotated options
        own = [p for p in signature.parameters.values() if p.name != "source"]
        added = [
            inspect.Parameter(
                f"input_{name}",
                inspect.Parameter.KEYWORD_ONLY,
                annotation=Annotated[str | None, typer.Option(INPUT_OPTIONS[name].flag, help=INPUT_OPTIONS[name].help)],
                default=None,
            )
            for name in names
        ]

        @functools.wraps(command)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            given = {name: kwargs.pop(f"input_{name}", None) for name in names}
            return command(*args, source=source_of_options(**given), **kwargs)

        wrapper.__annotations__ = {k: v for k, v in command.__annotations__.items() if k != "source"}
        wrapper.__signature__ = signature.replace(  # type: ignore[attr-defined]
            parameters=[*(p.replace(kind=inspect.Parameter.KEYWORD_ONLY) for p in own), *added]
        )
        return wrapper  # type: ignore[return-value]

    return decorate


def map_with_id(map: str | None, id: str | None) -> str | None:
    """The ``--map`` text with the id ``--id`` names added (``--id row`` is ``id=@row``), for the commands that
    pass --map on as text; ``--id`` beside an ``id=`` in --map is an error."""
    from juge.data.readers import parse_mapping, with_row_id

    mapping = with_row_id(parse_mapping(map), id)
    return ",".join(f"{k}={v}" for k, v in mapping.items()) if mapping else None


def source_of_options(
    *,
    map: str | None = None,
    id: str | None = None,
    labels_map: str | None = None,
    labels_nested: str | None = None,
    raters_by: str | None = None,
    labels_aggregate: str | None = None,
    label_weight: str | None = None,
    labels_seen_by: str | None = None,
    label_cols: str | None = None,
    scale: str | None = None,
    kind: str | None = None,
    missing: str | None = None,
    format: str | None = None,
    quoting: str | None = None,
    member: str | None = None,
    panel: str | None = None,
    selection: str | None = None,
) -> Any:
    """The StudySource the shared options' text describes (no files yet: the command adds them)."""
    from juge.calibration.source import KINDS, study_source
    from juge.data.labels import parse_label_weights, parse_missing, parse_scale, split_list
    from juge.data.readers import parse_mapping, with_quoting
    from juge.errors import InputError

    if kind not in (None, *KINDS):
        raise InputError(f"--kind must be pairwise, score or passfail, got {kind!r}")
    return study_source(
        mapping=parse_mapping(map_with_id(map, id)),
        labels_map=parse_mapping(labels_map, "--labels-map"),
        labels_nested=labels_nested,
        raters_by=raters_by or "key",
        labels_aggregate=labels_aggregate,
        label_weights=parse_label_weights(label_weight),
        labels_seen_by=labels_seen_by,
        label_cols=[c for c in split_list(label_cols) if c] if label_cols else [],
        scale=parse_scale(scale, kind=kind),
        kind=kind,
        missing=parse_missing(missing),
        format=with_quoting(format, quoting),
        member=member,
        panels=panel,
        selection=selection,
    )
