"""The report of a study with several criteria: the criteria side by side, then each criterion's report.

Each criterion's study is rendered by the usual pipeline; in HTML its page body becomes one section
of a single document (ids prefixed per criterion, so plots' references stay within their section).
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable
from typing import Any

from juge.calibration.results import Calibration
from juge.reports.render import fmt_estimate, kind_of, render_report

_ID = re.compile(r'(\bid="|url\(#|href="#)([^"\)]+)')
_BODY = re.compile(r"<main>(.*)</main>", re.S)


def render_criteria(calibration: Calibration, fmt: str, build: Callable[[Calibration], dict[str, Any]]) -> str:
    """`build(study)` gives one criterion's report data; this renders them all in `fmt` (html, md, json)."""
    studies = calibration.criteria or {}
    if fmt == "json":
        data = {name: json.loads(render_report(build(study), "json")) for name, study in studies.items()}
        out = {"kind": "criteria", "side_by_side": calibration.side_by_side or [], "criteria": data}
        return json.dumps(out, indent=2, ensure_ascii=False) + "\n"
    rows = calibration.side_by_side or []
    keys = list(dict.fromkeys(k for row in rows for k in row["judges"]))
    if fmt == "md":
        lines = ["# juge calibration report: criteria side by side", ""]
        titles = ["criterion", "n items", "ceiling agreement", "ceiling kappa", "ceiling alpha"]
        titles += [f"{k} agreement" for k in keys]
        lines += ["| " + " | ".join(_md(h) for h in titles) + " |", "|" + "---|" * len(titles)]
        for row in rows:
            cells = [_md(row["criterion"]), str(row["n_items"]), *(_fmt(row["ceiling"].get(s), s) for s in _CEILING)]
            cells += [_fmt(row["judges"].get(k, {}).get("agreement"), "agreement") for k in keys]
            lines.append("| " + " | ".join(cells) + " |")
        parts = ["\n".join(lines) + "\n"]
        for name, study in studies.items():
            parts.append(f"\n# Criterion: {_md(name)}\n\n" + render_report(build(study), "md"))
        return "".join(parts)
    pages = {name: render_report(build(study), "html") for name, study in studies.items()}
    first = next(iter(pages.values()))
    head = first[: first.index("<main>")]
    table = ["<h1>Criteria side by side</h1>", "<div class='scroll'><table><thead><tr>"]
    columns = ["criterion", "n items", "ceiling agreement", "ceiling kappa", "ceiling alpha"]
    columns += [f"{k} agreement with each person" for k in keys]
    table += [f"<th>{html.escape(c)}</th>" for c in columns] + ["</tr></thead><tbody>"]
    for k, row in enumerate(rows):
        table.append(f"<tr><td><a href='#c{k}-versions'>{html.escape(str(row['criterion']))}</a></td>")
        table.append(f"<td>{int(row['n_items'] or 0)}</td>")
        table += [f"<td>{html.escape(_fmt(row['ceiling'].get(s), s))}</td>" for s in _CEILING]
        table += [f"<td>{html.escape(_fmt(row['judges'].get(j, {}).get('agreement'), 'agreement'))}</td>" for j in keys]
        table.append("</tr>")
    table.append("</tbody></table></div>")
    sections = []
    for k, (name, page) in enumerate(pages.items()):
        found = _BODY.search(page)
        body = found.group(1) if found else ""
        body = _ID.sub(lambda m, k=k: f"{m.group(1)}c{k}-{m.group(2)}", body)
        sections.append(f"<section id='criterion-{k}'><h1>Criterion: {html.escape(str(name))}</h1>{body}</section>")
    return head + "<main>" + "".join(table) + "".join(sections) + "</main>\n</body>\n</html>\n"


_CEILING = ("agreement", "kappa", "krippendorff_alpha")


def _fmt(est: dict[str, Any] | None, stat: str) -> str:
    return fmt_estimate(est, kind_of(stat))


def _md(text: Any) -> str:
    from juge.reports.render import md_text

    return md_text(text)
