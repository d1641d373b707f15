"""Report plots: matplotlib figures rendered to inline SVG strings.

Every function takes the normalised report data (`juge.reports.model`) and returns an
SVG string ready to be inlined in HTML, or None when there is nothing to draw.
Text is written as SVG ``<text>`` (``svg.fonttype = none``), which matplotlib
XML-escapes; mathtext is off (``text.parse_math = False``) so a ``$`` in a dataset
category is drawn as a dollar, not parsed. Each figure gets its own ``svg.hashsalt``
so element ids never collide between figures inlined in the same page, and no
date is written, so the same data gives the same bytes.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

import matplotlib

matplotlib.use("Agg")  # no display; must precede pyplot
import matplotlib.pyplot as plt  # noqa: E402
from matplotlib.figure import Figure  # noqa: E402
from matplotlib.ticker import FuncFormatter, LogLocator, NullFormatter  # noqa: E402

from juge.visible import visible_text  # noqa: E402

# Okabe & Ito (2008) colour-blind safe palette.
PEOPLE = "#E69F00"
JUDGES = ("#0072B2", "#009E73", "#CC79A7", "#56B4E9", "#D55E00", "#F0E442")
BASELINE = ("#7f7f7f", "#4d4d4d", "#a6a6a6")
PERSON_ROUTE = "#fbe3e0"

_SVG_PROLOGUE = re.compile(r"^.*?(?=<svg\b)", re.S)
_SVG_HEIGHT = re.compile(r'(<svg[^>]*?) height="[^"]*"')
_METADATA = re.compile(r"<metadata>.*?</metadata>\s*", re.S)


@contextmanager
def _style(salt: str) -> Iterator[None]:
    with plt.rc_context(
        {
            "svg.fonttype": "none",
            "svg.hashsalt": salt,
            "text.parse_math": False,
            "font.family": "sans-serif",
            "font.size": 9,
            "axes.spines.top": False,
            "axes.spines.right": False,
            "axes.titlesize": 10,
            "axes.titleweight": "bold",
            "axes.titlelocation": "left",
        }
    ):
        yield


def to_svg(fig: Figure, label: str) -> str:
    """The figure as an inline ``<svg>`` element that scales to its container."""
    buf = io.StringIO()
    fig.savefig(buf, format="svg", metadata={"Date": None}, bbox_inches="tight")
    plt.close(fig)
    svg = _METADATA.sub("", _SVG_PROLOGUE.sub("", buf.getvalue(), count=1))
    # Keep the natural width (CSS caps it at the column); the viewBox gives the height.
    svg = _SVG_HEIGHT.sub(r"\1", svg, count=1)
    # matplotlib XML-escapes text but leaves a judge's or category's bidi override and control characters acting.
    svg, label = visible_text(svg), visible_text(label)
    label = label.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")
    return svg.replace("<svg", f'<svg role="img" aria-label="{label}" preserveAspectRatio="xMinYMin meet"', 1)


def _errors(estimates: list[dict[str, Any]]) -> list[list[float]]:
    """Asymmetric error-bar lengths; zero where the study gave no interval.

    A percentile bootstrap interval can exclude its own point estimate (skewed statistics
    such as kappa on few items); the bar then stops at the point rather than going negative.
    """
    lower = [max(0.0, e["value"] - e["low"]) if e["low"] is not None else 0.0 for e in estimates]
    upper = [max(0.0, e["high"] - e["value"]) if e["high"] is not None else 0.0 for e in estimates]
    return [lower, upper]


def _n(e: dict[str, Any] | None) -> str:
    return f"n={e['n']}" if e and e.get("n") is not None else "n=?"


def _judge_colours(judges: list[dict[str, Any]]) -> dict[str, str]:
    colours, j, b = {}, 0, 0
    for judge in judges:
        if judge["baseline"]:
            colours[judge["key"]] = BASELINE[b % len(BASELINE)]
            b += 1
        else:
            colours[judge["key"]] = JUDGES[j % len(JUDGES)]
            j += 1
    return colours


def agreement_plot(data: dict[str, Any]) -> str | None:
    """Agreement and kappa with each person, per judge and baseline, against the ceiling band."""
    panels = ("agreement", "weighted_kappa" if data["kind"] == "score" else "kappa")
    judges = [j for j in data["judges"] if any(j["vs_people"].get(stat) for stat in panels)]
    if not judges:
        return None
    colours = _judge_colours(data["judges"])
    ceiling = data["ceiling"]
    with _style("agreement"):
        fig, axes = plt.subplots(1, 2, figsize=(9.5, 0.45 * len(judges) + 1.3), sharey=True)
        for ax, stat in zip(axes, panels):
            band = ceiling.get(stat)
            if band:
                if band["low"] is not None:
                    ax.axvspan(
                        band["low"], band["high"], color=PEOPLE, alpha=0.22, lw=0, label="person vs person (95 % CI)"
                    )
                ax.axvline(band["value"], color=PEOPLE, lw=1.5)
            for y, judge in enumerate(judges):
                est = judge["vs_people"].get(stat)
                if est is None:
                    ax.text(
                        0.01,
                        y,
                        "not available",
                        va="center",
                        fontsize=8,
                        color="#555",
                        transform=ax.get_yaxis_transform(),
                    )
                    continue
                ax.errorbar(
                    est["value"],
                    y,
                    xerr=_errors([est]),
                    fmt="s" if judge["baseline"] else "o",
                    color=colours[judge["key"]],
                    capsize=3,
                    ms=6,
                )
            ax.set_title(f"{data['stat_labels'][stat]} with each person")
            lows = [j["vs_people"][stat]["low"] or 0.0 for j in judges if j["vs_people"].get(stat)]
            ax.set_xlim(min([0.0, *lows]), 1.0)
            ax.grid(axis="x", color="#ddd", lw=0.6)
            ax.set_axisbelow(True)
        axes[0].set_yticks(range(len(judges)))
        axes[0].set_yticklabels([f"{j['key']}  ({_n(j['vs_people']['agreement'])})" for j in judges])
        axes[0].invert_yaxis()
        fig.tight_layout()
        if ceiling.get("agreement"):
            handles, labels = axes[0].get_legend_handles_labels()
            fig.legend(handles, labels, loc="upper center", bbox_to_anchor=(0.5, 0.0), frameon=False, fontsize=8)
        return to_svg(fig, "Agreement and kappa of each judge with each person, with the person-vs-person ceiling")


def _category_label(cat: dict[str, Any]) -> str:
    votes = sorted(
        {e["agreement"]["n"] for e in cat["judges"].values() if e.get("agreement") and e["agreement"]["n"] is not None}
    )
    votes_text = "?" if not votes else f"{votes[0]}" if len(votes) == 1 else f"{votes[0]}–{votes[-1]}"
    return f"{cat['name']}\npairs n={_pairs_n(cat['ceiling'])} · votes n={votes_text}"


def _pairs_n(ceiling: dict[str, Any] | None) -> int:
    """Rater pairs behind a category's ceiling: its agreement's n, else the pair count the study
    gives (0 when no item of the category has two raters, which is why there is no ceiling)."""
    ceiling = ceiling or {}
    agreement = ceiling.get("agreement") or {}
    if agreement.get("n") is not None:
        return int(agreement["n"])
    return int(ceiling.get("n_pairs") or 0)


def category_plot(data: dict[str, Any], columns: int = 4) -> str | None:
    """Per category: person vs person (band) beside each judge vs person, with intervals and n; policy routes marked.

    Small multiples, one panel per category, laid out like the overall agreement plot
    so the two read the same way.
    """
    cats = data["categories"]
    keys = [j["key"] for j in data["judges"] if any(c["judges"].get(j["key"], {}).get("agreement") for c in cats)]
    if not cats or not keys:
        return None
    colours = _judge_colours(data["judges"])
    baseline = {j["key"]: j["baseline"] for j in data["judges"]}
    columns = min(columns, len(cats))
    rows = -(-len(cats) // columns)
    with _style("category"):
        fig, axes = plt.subplots(
            rows,
            columns,
            figsize=(2.3 * columns + 1.6, (0.24 * len(keys) + 0.9) * rows),
            sharey=True,
            sharex=True,
            squeeze=False,
        )
        for ax, cat in zip(axes.flat, cats):
            band = cat["ceiling"]["agreement"]
            if cat["route"] == "person":
                ax.set_facecolor(PERSON_ROUTE)
            if band:
                if band["low"] is not None:
                    ax.axvspan(band["low"], band["high"], color=PEOPLE, alpha=0.25, lw=0)
                ax.axvline(band["value"], color=PEOPLE, lw=1.4)
            for y, key in enumerate(keys):
                est = cat["judges"].get(key, {}).get("agreement")
                if est:
                    ax.errorbar(
                        est["value"],
                        y,
                        xerr=_errors([est]),
                        fmt="s" if baseline[key] else "o",
                        color=colours[key],
                        capsize=2,
                        ms=4,
                        lw=1,
                    )
            title = _category_label(cat)
            ax.set_title(
                ("→ person · " if cat["route"] == "person" else "") + title,
                fontsize=8,
                color="#a3271b" if cat["route"] == "person" else "#1d2430",
                loc="left",
                fontweight="normal",
            )
            ax.set_xlim(0, 1)
            ax.set_xticks([0, 0.5, 1])
            ax.tick_params(labelsize=8)
            ax.grid(axis="x", color="#ddd", lw=0.6)
            ax.set_axisbelow(True)
        for ax in list(axes.flat)[len(cats) :]:
            ax.set_visible(False)
        axes[0][0].set_yticks(range(len(keys)))
        axes[0][0].set_yticklabels(keys)
        axes[0][0].set_ylim(len(keys) - 0.5, -0.5)
        for ax in axes[-1]:
            ax.set_xlabel("agreement with each person", fontsize=8)
        fig.tight_layout(h_pad=1.2, w_pad=0.8)
        return to_svg(fig, "Agreement with each person per category: person vs person beside each judge")


def _bar_plot(
    rows: list[tuple[str, dict[str, Any], str]], title: str, xlabel: str, salt: str, reference: float | None = None
) -> str:
    with _style(salt):
        fig, ax = plt.subplots(figsize=(8.5, 0.42 * len(rows) + 1.0))
        ys = range(len(rows))
        ests = [e for _, e, _ in rows]
        ax.barh(
            ys,
            [e["value"] for e in ests],
            xerr=_errors(ests),
            color=[c for *_, c in rows],
            capsize=3,
            height=0.6,
            error_kw={"lw": 1},
        )
        if reference is not None:
            ax.axvline(reference, color="#444", lw=0.8, ls="--")
        ax.set_yticks(list(ys))
        ax.set_yticklabels([f"{name}  ({_n(e)})" for name, e, _ in rows])
        ax.invert_yaxis()
        ax.set_xlim(0, 1)
        ax.set_xlabel(xlabel)
        ax.grid(axis="x", color="#ddd", lw=0.6)
        ax.set_axisbelow(True)
        fig.tight_layout()
        return to_svg(fig, title)


def order_flip_plot(data: dict[str, Any]) -> str | None:
    """Share of items whose verdict changed when the answers swapped places, per judge."""
    colours = _judge_colours(data["judges"])
    rows = [(j["key"], j["order_flip_rate"], colours[j["key"]]) for j in data["judges"] if j["order_flip_rate"]]
    if not rows:
        return None
    return _bar_plot(
        rows, "Order flips: verdict changes when the answers swap places", "share of items (inconsistent)", "flip"
    )


def picks_longer_plot(data: dict[str, Any]) -> str | None:
    """Share of decisive verdicts that pick the longer answer: people, then each judge."""
    colours = _judge_colours(data["judges"])
    rows = [
        (j["key"], j["picks_longer"], colours[j["key"]])
        for j in data["judges"]
        if j["picks_longer"] and j["key"] != "longer answer"
    ]
    if data["people_picks_longer"]:
        rows.insert(0, ("people", data["people_picks_longer"], PEOPLE))
    if not rows:
        return None
    return _bar_plot(
        rows, "Decisive verdicts that pick the longer answer", "share of A/B verdicts", "longer", reference=0.5
    )


def confusion_plot(judge: dict[str, Any]) -> str | None:
    """Heat map of a judge's confusion matrix against people (counts in the cells)."""
    conf = judge.get("confusion")
    if not conf:
        return None
    matrix = conf["matrix"]
    with _style(f"confusion-{judge['key']}"):
        fig, ax = plt.subplots(figsize=(0.55 * len(conf["columns"]) + 2.2, 0.5 * len(conf["rows"]) + 1.6))
        ax.imshow(matrix, cmap="Blues")
        top = max((c for r in matrix for c in r), default=0)
        for i, row in enumerate(matrix):
            for k, value in enumerate(row):
                ax.text(
                    k,
                    i,
                    str(value),
                    ha="center",
                    va="center",
                    fontsize=8,
                    color="white" if top and value > top / 2 else "#111",
                )
        ax.set_xticks(range(len(conf["columns"])), conf["columns"])
        ax.set_yticks(range(len(conf["rows"])), conf["rows"])
        ax.set_xlabel(conf["axis"]["columns"])
        ax.set_ylabel(conf["axis"]["rows"])
        ax.spines[:].set_visible(False)
        ax.set_title("Confusion matrix")
        fig.tight_layout()
        return to_svg(fig, f"Confusion matrix of {judge['key']} against people")


def reliability_plot(judge: dict[str, Any]) -> str | None:
    """Mean human score for each judge score (95 % interval bars when the study gave them), against the
    diagonal of perfect calibration."""
    points = judge.get("reliability")
    if not points:
        return None
    xs = [p["judge_score"] for p in points]
    ys = [p["mean_human_score"] for p in points]
    bounds = [b for p in points for b in (p.get("low"), p.get("high")) if b is not None]
    lo, hi = min(xs + ys + bounds), max(xs + ys + bounds)
    estimates = [{"value": p["mean_human_score"], "low": p.get("low"), "high": p.get("high")} for p in points]
    with _style(f"reliability-{judge['key']}"):
        fig, ax = plt.subplots(figsize=(3.8, 3.4))
        ax.plot([lo, hi], [lo, hi], color="#999", ls="--", lw=0.8, label="perfectly calibrated")
        ax.errorbar(xs, ys, yerr=_errors(estimates), fmt="o-", color=JUDGES[0], capsize=3, label=judge["key"])
        for x, y, p in zip(xs, ys, points):
            ax.annotate(f"n={p['n']}", (x, y), textcoords="offset points", xytext=(4, -10), fontsize=7, color="#555")
        ax.set_xlabel("judge score")
        ax.set_ylabel("mean human score")
        ax.set_title("Reliability")
        ax.legend(frameon=False, fontsize=7, loc="upper left")
        fig.tight_layout()
        return to_svg(fig, f"Reliability curve of {judge['key']}")


def audit_plot(data: dict[str, Any]) -> str | None:
    """The weekly audit over time: each week's agreement (dots, sized by items), the agreement so far with its
    anytime-valid band, the policy's bar, and the week a drift alarm went off."""
    audit = data.get("audit")
    weeks = (audit or {}).get("weeks") or []
    if not weeks:
        return None
    xs = list(range(len(weeks)))
    so_far = [w["cumulative"] or {} for w in weeks]
    with _style("audit"):
        fig, ax = plt.subplots(figsize=(8.5, 3.4))
        names = [w["week"] for w in weeks]
        # the band assumes an agreement that does not change: after a drift alarm it no longer says anything
        until = names.index(audit["drifted_in"]) if audit and audit.get("drifted_in") in names else len(weeks)
        nan = float("nan")
        low = [float(c["low"]) if c.get("low") is not None and i < until else nan for i, c in enumerate(so_far)]
        high = [float(c["high"]) if c.get("high") is not None and i < until else nan for i, c in enumerate(so_far)]
        ax.fill_between(xs, low, high, color=JUDGES[0], alpha=0.15, lw=0, step="mid", label="band (anytime-valid)")
        ax.plot(
            xs,
            [float(c["value"]) if c.get("value") is not None else nan for c in so_far],
            color=JUDGES[0],
            lw=1.6,
            label="judge vs person so far",
        )
        sizes = [12 + 4 * min(w["n_items"], 50) for w in weeks]
        ax.scatter(xs, [w["agreement"] for w in weeks], s=sizes, color=JUDGES[0], alpha=0.45, lw=0, label="that week")
        bars = [w["bar"] if w["bar"] is not None else float("nan") for w in weeks]
        ax.step(xs, bars, where="mid", color=PEOPLE, lw=1.4, ls="--", label="policy's bar (person vs person - margin)")
        if until < len(weeks):
            ax.axvline(until, color="#D55E00", lw=1.0)
            ax.annotate("drift", (until, 0.02), xytext=(3, 0), textcoords="offset points", color="#D55E00", fontsize=8)
        step = max(1, len(weeks) // 13)
        ax.set_xticks(xs[::step])
        ax.set_xticklabels(names[::step], rotation=45, ha="right", fontsize=7)
        ax.set_ylim(0, 1.02)
        ax.set_ylabel("judge vs person agreement")
        ax.grid(axis="y", color="#ddd", lw=0.6)
        ax.set_axisbelow(True)
        ax.legend(frameon=False, fontsize=7, loc="lower left", ncol=2)
        fig.tight_layout()
        return to_svg(fig, "Weekly audit: judge vs person agreement by week against the policy's bar")


def configurations_plot(data: dict[str, Any]) -> str | None:
    """A cascade policy's configurations: agreement with the majority on the items each decides (with its
    interval) against its coverage (left) and its cost per item (right); dev hollow, holdout filled, the chosen one
    ringed, the target as a dashed line. The curve a choice of configuration moves along."""
    configs = data.get("configurations")
    if not configs or not configs["dev"]:
        return None
    splits = [("dev", configs["dev"], "none"), ("holdout", configs["holdout"], None)]
    priced = all(r["usd_per_item"] is not None for _, rows, _ in splits for r in rows)
    cost_key, cost_label = ("usd_per_item", "cost per item (US$)") if priced else ("tokens_per_item", "tokens per item")
    names = [r["name"] for r in configs["dev"]]
    colours = {n: JUDGES[i % len(JUDGES)] for i, n in enumerate(names)}
    with _style("configurations"):
        fig, axes = plt.subplots(1, 2, figsize=(9.5, 3.6), sharey=True)
        for ax, x_key, x_label in ((axes[0], "coverage", "coverage (items decided without a person)"),
                                   (axes[1], cost_key, cost_label)):  # fmt: skip
            for split, rows, face in splits:
                for r in rows:
                    e = r["vs_majority"]
                    if not e or e["value"] is None or r[x_key] is None:
                        continue
                    colour = colours.get(r["name"], BASELINE[0])
                    ax.errorbar([r[x_key]], [e["value"]], yerr=_errors([e]), fmt="o", ms=7, capsize=2,
                                color=colour, mfc=face or colour, mec=colour, lw=1.0,
                                label=f"{r['name']} ({split})")  # fmt: skip
                    if r["chosen"] and split == "dev":
                        ax.plot([r[x_key]], [e["value"]], "o", ms=14, mfc="none", mec="#000", lw=1.2)
            ax.axhline(configs["target"], color=PEOPLE, ls="--", lw=1.2)
            ax.set_xlabel(x_label)
            ax.grid(color="#ddd", lw=0.6)
            ax.set_axisbelow(True)
        axes[0].set_xlim(0, 1.02)
        if priced and all(r["usd_per_item"] > 0 for _, rows, _ in splits for r in rows):
            axes[1].set_xscale("log")  # judges' prices differ tenfold; plain tick labels (mathtext is off)
            axes[1].xaxis.set_major_locator(LogLocator(base=10, subs=(1.0, 2.0, 5.0)))
            axes[1].xaxis.set_major_formatter(FuncFormatter(lambda v, _: f"{v:g}"))
            axes[1].xaxis.set_minor_formatter(NullFormatter())
        axes[0].set_ylabel("agreement with the majority (decided items)")
        axes[0].set_title("Coverage / agreement")
        axes[1].set_title("Cost / agreement")
        handles, labels = axes[0].get_legend_handles_labels()
        fig.legend(handles, labels, frameon=False, fontsize=7, loc="lower center", ncol=min(3, max(1, len(labels))),
                   bbox_to_anchor=(0.5, -0.08 * ((len(labels) + 2) // 3)))  # fmt: skip
        fig.tight_layout()
        return to_svg(fig, "Configurations: agreement with the majority against coverage and against cost per item")


def all_plots(data: dict[str, Any]) -> dict[str, Any]:
    """Every plot the report shows, keyed by section; absent ones are None."""
    return {
        "agreement": agreement_plot(data),
        "category": category_plot(data),
        "order_flip": order_flip_plot(data),
        "picks_longer": picks_longer_plot(data),
        "audit": audit_plot(data),
        "configurations": configurations_plot(data),
        "single_score": {
            key: {"confusion": confusion_plot(j), "reliability": reliability_plot(j)}
            for j in data["judges"]
            if (key := j["key"]) in data["single_score"]
        },
    }
