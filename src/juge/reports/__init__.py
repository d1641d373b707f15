"""Reports: a calibration result rendered as self-contained HTML (inline SVG plots), Markdown or JSON.

`write_report(calibration, path, fmt="html")` (``write.py``) is the one call other commands need (`juge demo`
uses it); ``api.py`` is `juge report` (reading files, a policy and disagreements; a stored run or two runs
compared, built by ``runs.py``), all rendered by ``render.render_report``.

Names are imported on first use: ``import juge.reports.fit`` (the terminal's layout) loads no renderer.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from juge.lazy import lazy_names

if TYPE_CHECKING:
    from juge.files import write_atomic
    from juge.reports.model import build_report_data
    from juge.reports.render import render_report
    from juge.reports.write import read_calibration, read_result, write_report

_LAZY = {
    "build_report_data": "juge.reports.model",
    "read_calibration": "juge.reports.write",
    "read_result": "juge.reports.write",
    "render_report": "juge.reports.render",
    "write_atomic": "juge.files",
    "write_report": "juge.reports.write",
}

__all__ = ["build_report_data", "read_calibration", "read_result", "render_report", "write_report", "write_atomic"]


__getattr__, __dir__ = lazy_names(__name__, _LAZY)
