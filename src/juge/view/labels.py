"""People's labels beside a run's verdicts: from the label projects the run was attached to
(``juge label attach-run``), read once per run, and from a labels file given to ``juge view --labels``."""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path
from typing import Any

from juge.data.records import HumanLabel
from juge.label.db import LabelStore


def find_label_store(run_store: Any, label_db_url: str | None) -> LabelStore | None:
    """The label store to read: the one named, else the run store's own SQLite file when it holds labelling
    projects (`juge label` keeps them there by default), else none (nothing is created)."""
    from juge.label.api import open_label_store

    if label_db_url:
        return open_label_store(label_db_url)
    conn = getattr(run_store, "conn", None)
    if not isinstance(getattr(run_store, "path", None), Path) or conn is None:
        return None
    has_projects = conn.execute("SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = 'label_projects'")
    return open_label_store(f"sqlite:///{run_store.path}") if has_projects.fetchone() else None


class RunLabels:
    """Labels by item for a run: the attached projects' (read once per run) and the labels file's."""

    def __init__(self, store: LabelStore | None, from_file: Mapping[str, list[HumanLabel]], file: str | None):
        self.store, self.from_file, self.file = store, from_file, file
        self._runs: dict[str, tuple[list[str], dict[str, list[tuple[str, HumanLabel]]]]] = {}

    def projects(self, run_id: str) -> list[str]:
        """The labelling projects the run's verdicts were attached to."""
        return self._of(run_id)[0]

    def of(self, run_id: str, item_id: str) -> list[tuple[str, HumanLabel]]:
        """(where it comes from, label) for each label of the item: an attached project, or the labels file."""
        attached = self._of(run_id)[1].get(item_id, [])
        return attached + [(self.file or "labels file", label) for label in self.from_file.get(item_id, [])]

    def _of(self, run_id: str) -> tuple[list[str], dict[str, list[tuple[str, HumanLabel]]]]:
        if run_id not in self._runs:
            names: list[str] = []
            by_item: dict[str, list[tuple[str, HumanLabel]]] = {}
            for project in self.store.attached_projects(run_id) if self.store is not None else []:
                names.append(project.name)
                for label in self.store.export_labels(project):  # type: ignore[union-attr]
                    by_item.setdefault(label.item_id, []).append((f"project {project.name}", label))
            self._runs[run_id] = (names, by_item)
        return self._runs[run_id]
