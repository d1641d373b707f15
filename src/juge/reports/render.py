"""Render normalised report data to HTML (self-contained, inline SVG) or Markdown.

Calibration data (`juge.reports.model`) uses report.*.j2; run and comparison data
(`juge.reports.runs`, marked by their "report" key) use run.*.j2 and compare.*.j2.

HTML goes through a Jinja2 environment with autoescape on, so every dataset or model
text is escaped; plots are trusted SVG made by `juge.reports.plots` and are the only
values marked safe. Markdown escapes the same texts (HTML entities, table pipes),
since Markdown viewers render raw HTML.
"""

from __future__ import annotations

import html
import json
import math
from typing import Any

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from juge.reports import plots
from juge.stats.estimate import Estimate, estimate_parts, format_estimate
from juge.visible import visible_html, visible_text

# Every figure goes through juge.stats.estimate.format_estimate: a rate as a percentage with one decimal, a
# kappa, correlation or alpha with two, a tuning figure with three; an absent one is "n/a".
NOT_AVAILABLE = format_estimate(None)
RATE_STATS = {
    "agreement",
    "order_flip_rate",
    "picks_longer",
    "threshold_agreement",
    "failures_caught",
    "false_flags",
    "agreement_without_ties",
}
DIGITS = {"rate": (1, True), "coefficient": (2, False), "figure": (3, False)}


def _parts(est: Estimate | dict[str, Any] | None, kind: str) -> tuple[str, str, str]:
    digits, percent = DIGITS[kind]
    return estimate_parts(est, digits, percent=percent)


def fmt_value(value: float | None, kind: str) -> str:
    """A bare number (a share, a headline figure) rounded as an estimate of its kind, without interval or n."""
    return _parts(None if value is None else {"value": value}, kind)[0]


def fmt_interval(est: Estimate | dict[str, Any] | None, kind: str) -> str:
    return _parts(est, kind)[1]


def fmt_n(est: Estimate | dict[str, Any] | None) -> str:
    return _parts(est, "figure")[2]


def kind_of(stat: str) -> str:
    return "rate" if stat in RATE_STATS else "coefficient"


def fmt_estimate(est: Estimate | dict[str, Any] | None, kind: str) -> str:
    """One line, ``71.2 % [65.0, 77.0] n=155`` (:func:`juge.stats.estimate.format_estimate`), or ``n/a``."""
    digits, percent = DIGITS[kind]
    return format_estimate(est, digits, percent=percent)


def fmt_count(value: int | None) -> str:
    return NOT_AVAILABLE if value is None else str(value)


def md_text(text: Any) -> str:
    """Escape text for Markdown: HTML entities, pipes and backslashes; newlines become <br>."""
    escaped = html.escape(visible_text("" if text is None else str(text)), quote=False)
    for char in "\\|`*_[]#":
        escaped = escaped.replace(char, "\\" + char)
    return escaped.replace("\r\n", "\n").replace("\n", "<br>")


def _environment(autoescape: bool) -> Environment:
    env = Environment(
        loader=PackageLoader("juge.reports", "templates"),
        autoescape=autoescape,
        undefined=StrictUndefined,
        trim_blocks=True,
        lstrip_blocks=True,
        keep_trailing_newline=True,
        finalize=visible_html if autoescape else None,  # hidden characters shown, never acting
    )
    env.filters.update(
        value=fmt_value,
        parts=_parts,
        interval=fmt_interval,
        n=fmt_n,
        estimate=fmt_estimate,
        count=fmt_count,
        md=md_text,
        kind=kind_of,
    )
    env.globals["NOT_AVAILABLE"] = NOT_AVAILABLE
    return env


# Report data with a "report" key other than calibration has its own templates (no plots).
OTHER_REPORTS = ("run", "compare", "tune")


def _other_report(data: dict[str, Any]) -> str | None:
    report = data.get("report")
    return report if report in OTHER_REPORTS else None


def render_html(data: dict[str, Any]) -> str:
    """The self-contained HTML report: inline CSS and SVG, no script, no external resource."""
    env = _environment(autoescape=True)
    if other := _other_report(data):
        css = env.loader.get_source(env, "report.css")[0]  # type: ignore[union-attr]
        return env.get_template(f"{other}.html.j2").render(d=data, css=Markup(css))
    svgs = plots.all_plots(data)
    safe = {k: Markup(v) if isinstance(v, str) else v for k, v in svgs.items() if k != "single_score"}
    safe["single_score"] = {
        key: {name: Markup(svg) if svg else None for name, svg in figs.items()}
        for key, figs in svgs["single_score"].items()
    }
    css = env.loader.get_source(env, "report.css")[0]  # type: ignore[union-attr]
    return env.get_template("report.html.j2").render(d=data, plots=safe, css=Markup(css))


def render_markdown(data: dict[str, Any]) -> str:
    """The same numbers as Markdown tables."""
    name = f"{other}.md.j2" if (other := _other_report(data)) else "report.md.j2"
    return _environment(autoescape=False).get_template(name).render(d=data)


def render_json(data: dict[str, Any]) -> str:
    """The normalised data the HTML and Markdown are made from. A number that JSON cannot hold
    (NaN, infinity: only a hand-edited input has one) is written as null, never as invalid JSON."""
    return json.dumps(_finite(data), indent=2, ensure_ascii=False, allow_nan=False) + "\n"


def _finite(value: Any) -> Any:
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {k: _finite(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [_finite(v) for v in value]
    return value


FORMATS = {"html": render_html, "md": render_markdown, "json": render_json}


def render_report(data: dict[str, Any], fmt: str = "html") -> str:
    """Render normalised report data (`build_report_data`) in `fmt`: html, md or json."""
    if fmt not in FORMATS:
        raise ValueError(f"unknown report format {fmt!r}; use one of {sorted(FORMATS)}")
    return FORMATS[fmt](data)
