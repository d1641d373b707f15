"""A judge policy and its holdout test in the terminal: the tables of `juge policy derive` and `juge policy test`.

Each function takes the typed result (:class:`juge.results.PolicyResult`, :class:`juge.results.HoldoutTest`) and
prints it on ``out`` (tables fitted to its width by :mod:`juge.reports.fit`), with warnings on ``err``; so the
commands stay a shell over the API and the tables can be checked at any width without the CLI.
"""

from __future__ import annotations

from rich.console import Console
from rich.table import Table
from rich.text import Text

from juge.calibration.results import Agreement, Caught
from juge.policy.configurations import routing_note
from juge.policy.decision import TOO_FEW
from juge.policy.results import (
    CascadeConfiguration,
    CategoryConclusion,
    ConfigurationCost,
    ConfigurationFigures,
    Coverage,
    HoldoutCascade,
    HoldoutConfiguration,
    HoldoutFigures,
    HoldoutTest,
    PeopleAgreement,
    PolicyGuarantee,
    PolicyResult,
)
from juge.reports.fit import fitted, wrapped
from juge.stats.estimate import format_estimate as fmt

__all__ = ["print_input_notes", "print_policy", "print_test"]


def print_input_notes(result: PolicyResult | HoldoutTest, err: Console) -> None:
    """What the readers warned about the inputs (labels left out, files without a hash, ...)."""
    for warning in result.input_warnings:
        err.print(Text("warning: " + warning, style="bold yellow"), soft_wrap=True)
    for notice in result.input_notices:
        err.print(Text("note: " + notice, style="yellow"), soft_wrap=True)


def print_policy(policy: PolicyResult, out: Console, err: Console) -> None:
    """A derived policy: rule 1's candidates, rule 2's reference prompts, rule 3's categories (rule 6's
    threshold under ``--rule guarantee``); a PASS/FAIL or score policy with the figures of its kind."""
    if policy.judge_kind == "pairwise":
        _pair_policy(policy, out, err)
    else:
        _grade_policy(policy, out)
        if policy.guarantee:
            _guarantee(policy.guarantee, out, err)
        if policy.cascade is not None:
            _cascade(policy, out)


def print_test(test: HoldoutTest, out: Console) -> None:
    """A holdout test: the warning of a forced test, the decisions, the figures on the holdout, per category,
    and the conclusion."""
    if test.warning:  # once, with the figures it qualifies (and in --json)
        out.print(Text(test.warning, style="bold red"))
    _decisions(test, out)
    if test.judge_kind == "pairwise":
        _pair_test(test, out)
    else:
        _grade_test(test, out)
    conclusion = test.conclusion
    held, reason = (conclusion.held, conclusion.reason) if conclusion is not None else (None, "")
    style = "bold green" if held else "bold red"
    out.print(Text("Policy on holdout: ", style="bold") + Text(reason, style=style), soft_wrap=True)


# ---- derive -----------------------------------------------------------------------------------------


def _coverage(cov: Coverage | None) -> str:
    if cov is None or cov.value is None:
        return "n/a"
    return f"{cov.value:.1%} ({cov.n_with_verdict}/{cov.n_items})"


def _decision(policy: PolicyResult, category: str) -> Text:
    """Where a category goes: judge, person, or person because there are too few items to decide."""
    d = policy.decision(category)
    if d is None:
        return Text("")
    text = Text(d.route)
    if d.ruling == "too_few":
        text.append(" (too few items to decide)", style="yellow")
    return text


def _pair_policy(policy: PolicyResult, out: Console, err: Console) -> None:
    sel = policy.selection
    if sel is not None:
        table = Table(
            title=f"Rule 1: candidates on dev, compared on the {sel.n_shared_items} shared items (a "
            "majority and a verdict from every candidate)",
            title_justify="left",
        )
        for col in ("candidate", "coverage", "vs majority", "kappa", "vs each person"):
            table.add_column(col)
        for row in [*sel.candidates, *sel.references]:
            reference = row in sel.references
            mark = " (chosen)" if row.key == sel.chosen else " (no call)" if reference else ""
            table.add_row(
                Text(row.key + mark),
                "" if reference else _coverage(row.coverage),
                _agreement(row.vs_majority),
                _kappa(row.vs_majority),
                _agreement(row.vs_people),
            )
        out.print(fitted(table, out))
        out.print(Text("coverage: dev items with a verdict / dev items"))
        if sel.difference:
            d = sel.difference
            out.print(
                wrapped(f"chosen - runner-up ({d.b}), paired on the {d.n_items} shared items: {fmt(d.difference)}", out)
            )
    for cat, choice in policy.reference.items():
        out.print(
            wrapped(
                f"Rule 2, {cat}: reference prompt {'used' if choice.use_reference else 'not used'} "
                f"(with - without: {fmt(choice.difference)})",
                out,
            )
        )
    g = policy.guarantee
    overridden = policy.rule == "guarantee"
    caption = None
    if overridden:
        caption = (
            "Under --rule guarantee these category decisions are not used: rule 6 routes each item by the "
            "judge's confidence"
            + (
                "; no threshold reached the target, so every item goes to a person."
                if g and g.threshold is None
                else "."
            )
        )
    table = Table(
        title=Text(f"Rule 3: categories (margin {policy.margin:g}, rule {policy.rule})"),
        title_justify="left",
        caption=None if caption is None else Text(caption),
        caption_justify="left",
    )
    columns = ["category", "prompt", "judged", "judge vs person", "person vs person", "gap"]
    for col in (*columns, "decision (not used)" if overridden else "decision"):
        table.add_column(col)
    for cat, r in policy.categories.items():
        table.add_row(
            Text(cat),
            Text(r.template or ""),
            f"{r.n_with_verdict}/{r.n_items}",
            fmt(r.vs_people),
            fmt(r.ceiling),
            "n/a" if r.gap is None else f"{r.gap:+.3f}",
            _decision(policy, cat),
        )
    out.print(fitted(table, out))
    for thin in policy.decisions.values():
        if thin.ruling == "too_few":
            err.print(
                Text(f"warning: category {thin.category}: {TOO_FEW} ({thin.too_few})", style="yellow"), soft_wrap=True
            )
    if g:
        _guarantee(g, out, err)
    if policy.cascade is not None:
        _cascade(policy, out)


def _cascade(policy: PolicyResult, out: Console) -> None:
    """The stages on dev: who reaches each, its threshold, what it decides; the categories above are stage 1's."""
    c = policy.cascade
    assert c is not None
    table = Table(
        title=Text(
            f"Cascade on dev: agreement with the majority >= {c.target:g} on decided items with probability "
            f"{c.confidence:g} (each stage at {c.stage_confidence or c.confidence:g})"
        ),
        title_justify="left",
        caption=Text(f"a person: {c.n_person} of {c.n_items} dev items; Rule 3 above is stage 1's"),
        caption_justify="left",
    )
    for col in ("stage", "judge", "reaching", "in its categories", "threshold", "walk", "decides"):
        table.add_column(col)
    for k, s in enumerate(c.stages, 1):
        g = s.guarantee
        last = g.steps[-1] if g and g.steps else None
        walk = (
            f"{last.disagreements}/{last.n} wrong, bound {last.upper_bound:.3f}" + ("" if last.accepted else " (stop)")
            if last
            else "no item"
        )
        threshold = "none" if g is None or g.threshold is None else f"{g.threshold:.3f}"
        table.add_row(str(k), Text(s.judge), str(s.n_reaching), str(s.n_in_its_categories), threshold, walk,
                      str(s.n_decided))  # fmt: skip
    out.print(fitted(table, out))
    if c.configurations:
        configurations_table(c.configurations, "dev", out)
    if c.choice is not None:
        ch = c.choice
        line = (
            f"chosen: {ch.chosen}, the cheapest (in {ch.cost_basis}) of {', '.join(ch.within_noise)} within noise "
            f"of the best ({ch.best}) among those meeting the guarantee. {routing_note(ch)}"
            if ch.chosen
            else "chosen: none (no configuration meets the guarantee on dev)"
        )
        out.print(wrapped(line, out))
        if ch.warning:  # e.g. --minute-price given but left out: the terminal must not read as if it counted
            out.print(Text(f"warning: {ch.warning}", style="yellow"), soft_wrap=True)
    for a in [] if c.configurations else c.alone:
        agree = "n/a" if a.agreement_with_majority is None else f"{a.agreement_with_majority:.3f}"
        out.print(
            wrapped(
                f"{a.judge} alone at the same target: decides {a.n_decided} of {c.n_items} dev items "
                f"(agreement with the majority {agree}, n={a.n_with_majority})",
                out,
            )  # fmt: skip
        )


def _guarantee(g: PolicyGuarantee, out: Console, err: Console) -> None:
    """Rule 6 in one line, and a warning when no confidence threshold reached the target."""
    if g.threshold is not None:
        out.print(
            Text(
                f"Rule 6: the judge decides alone items with confidence >= {g.threshold:.3f}: "
                f"{g.n_covered} of all {g.n_items} dev items ({g.coverage or 0.0:.1%}); the rest go to a "
                "person"
            )
        )
        return
    best = min(g.steps, key=lambda s: s.upper_bound, default=None)
    detail = (
        f" (best: threshold {best.threshold:.3f} on {best.n} items, {best.disagreements} disagreements, "
        f"upper bound {best.upper_bound:.3f} > allowed {1 - g.target:.3f})"
        if best
        else ""
    )
    message = (
        f"warning: no confidence threshold reached the target agreement {g.target:g} at confidence "
        f"{g.confidence:g} on the {g.n_calibration} dev items with a verdict (pairs: the same in both orders) and "
        "a majority"
        f"{detail}: every item goes to a person. Lower "
        "--target or --confidence, or use --rule margin."
    )
    out.print(Text("Rule 6: no threshold; every item goes to a person", style="bold yellow"))
    err.print(Text(message, style="yellow"), soft_wrap=True)


def _grade_policy(policy: PolicyResult, out: Console) -> None:
    """A PASS/FAIL or score policy: the candidates, the threshold, the categories."""
    score = policy.judge_kind == "score"
    sel = policy.selection
    if sel is not None:
        table = Table(
            title=f"Rule 1: candidates on dev, by {(sel.by or 'kappa').replace('_', ' ')} with each person, on the "
            f"{sel.n_shared_items} items every candidate graded",
            title_justify="left",
        )
        passfail = policy.judge_kind == "passfail"
        extra = ["weighted kappa"] if score else ["failures caught", "false flags"] if passfail else []
        for col in ("candidate", "coverage", "kappa", "agreement", *extra):
            table.add_column(col)
        for row in [*sel.candidates, *sel.references]:
            f = row.vs_people or PeopleAgreement()
            cells = [fmt(f.kappa), fmt(f.agreement)] + ([fmt(f.weighted_kappa)] if score else [])
            if passfail:
                flags = f.false_flags
                cells += [_caught(f.failures_caught), fmt(None if flags is None else flags.rate)]
            reference = row in sel.references
            mark = " (chosen)" if row.key == sel.chosen else " (no call)" if reference else ""
            coverage = "" if reference else _coverage(row.coverage)
            table.add_row(Text(row.key + mark), coverage, *cells)
        out.print(fitted(table, out))
    if score and policy.threshold is not None:
        how = "chosen on dev from the labels" if policy.threshold_choice else "given"
        out.print(Text(f"threshold: a case passes at {policy.threshold:g} or above ({how})"))
    table = Table(title=f"Rule 3: categories (margin {policy.margin:g})", title_justify="left")
    for col in ("category", "judged", "decision", "why"):
        table.add_column(col)
    for cat, r in policy.categories.items():
        table.add_row(Text(cat), f"{r.n_with_verdict}/{r.n_items}", _decision(policy, cat), Text(r.reason))
    out.print(fitted(table, out))


# ---- test -------------------------------------------------------------------------------------------


def _decisions(test: HoldoutTest, out: Console) -> None:
    """How many holdout items the policy gave to the judge and to a person, and the judge's share."""
    # a line of its own: as the narrow table's title it wrapped inside the table's width (QA2)
    out.print(Text(f"Policy {test.policy_hash[:12]} on split {test.split} ({test.n_items} items)", style="italic"))
    table = Table()
    table.add_column("decision")
    table.add_column("items", justify="right")
    for label, count in test.decisions.items():
        table.add_row(Text(label), str(count))
    out.print(fitted(table, out))
    out.print(Text(f"judge decides alone: {fmt(test.judge_decides)}"))


def _agreement(part: Agreement | None) -> str:
    return fmt(None if part is None else part.agreement)


def _kappa(part: Agreement | None) -> str:
    return fmt(None if part is None else part.kappa)


def _caught(caught: Caught | None) -> str:
    """A rate with its count (``0.571 [0.232, 0.889] n=14 (caught 8 of 14)``)."""
    if caught is None:
        return fmt(None)
    return f"{fmt(caught.rate)} (caught {caught.k} of {caught.n})"


def _pair_test(test: HoldoutTest, out: Console) -> None:
    table = Table(title="Agreement on the holdout", title_justify="left")
    for col in ("items", "vs majority", "kappa", "judge vs each person", "person vs person"):
        table.add_column(col)
    for name, block in (("judged by the policy", test.on_judged_items), ("all, no policy", test.no_policy)):
        b = block or HoldoutFigures()
        table.add_row(name, _agreement(b.vs_majority), _kappa(b.vs_majority), _agreement(b.vs_people), fmt(b.ceiling))
    out.print(fitted(table, out))
    table = Table(title="Per category (items the judge decides)", title_justify="left")
    for col in ("category", "judge decides", "vs majority", "judge vs each person", "person vs person", "on holdout"):
        table.add_column(col)
    for cat, c in test.per_category.items():
        j = c.on_judged_items or HoldoutFigures()
        table.add_row(
            Text(cat),
            fmt(c.judge_decides),
            _agreement(j.vs_majority),
            _agreement(j.vs_people),
            fmt(j.ceiling),
            _held_text(c.conclusion),
        )
    out.print(fitted(table, out))
    _category_reasons(test, out)
    _confidence_test(test, out)
    out.print("Agreement with the majority is never compared with person vs person (the ceiling).")


def _confidence_test(test: HoldoutTest, out: Console) -> None:
    """--rule guarantee or --cascade on holdout, any judge kind: the guarantee measured on the decided items."""
    g = test.guarantee
    if g:
        held = {True: "held", False: "NOT held", None: "untested (the judge decided no item with a majority)"}[g.held]
        out.print(
            Text(
                f"guarantee: disagreement {fmt(g.disagreement)} on the {g.n_covered} items the judge "
                f"decided alone ({g.coverage or 0.0:.1%} of all {g.n_items} holdout items), allowed "
                f"{g.allowed_disagreement or 0.0:.3f}: {held}"
            )
        )
    if test.cascade is not None:
        _cascade_test(test.cascade, out)


def _cost(cost: ConfigurationCost) -> str:
    if cost.usd_per_item is not None:
        return f"US$ {cost.usd_per_item:.5f}"
    return f"{cost.tokens_per_item:,.0f} tokens (no US$: {cost.warning})"


def configurations_table(
    rows: list[CascadeConfiguration] | list[HoldoutConfiguration], split: str, out: Console
) -> None:
    """Each configuration considered: decided without a person, agreement on those items, cost per item,
    person-minutes saved; on dev where it stands in the choice, on holdout whether its guarantee held."""
    first = rows[0]
    f0: ConfigurationFigures = first.dev if isinstance(first, CascadeConfiguration) else first.holdout
    table = Table(
        title=Text(
            f"Configurations on {split} ({f0.n_items} items; person-minutes at {f0.minutes_per_label:g} per label)"
        ),
        title_justify="left",
    )
    last = "choice" if split == "dev" else "guarantee"
    for col in ("configuration", "decided", "a person", "vs majority", "vs each person", "cost per item",
                "minutes saved", last):  # fmt: skip
        table.add_column(col)
    for r in rows:
        f = r.dev if isinstance(r, CascadeConfiguration) else r.holdout
        if isinstance(r, CascadeConfiguration):
            status = (
                "CHOSEN" if r.chosen else "within noise" if r.within_noise else
                "below the best" if r.meets_guarantee else "no threshold"
            )  # fmt: skip
        else:
            held = {True: "held", False: "NOT held", None: "untested"}[r.guarantee_held]
            status = held + (" (chosen on dev)" if r.chosen else "")
        decided = str(f.n_decided) + (
            f" ({' + '.join(map(str, f.decided_by_stage))})" if len(f.decided_by_stage) > 1 else ""
        )
        table.add_row(Text(r.name), decided, str(f.n_person), fmt(f.vs_majority), fmt(f.vs_people), Text(_cost(f.cost)),
                      f"{f.person_minutes_saved:g}", status)  # fmt: skip
    out.print(fitted(table, out))


def _cascade_test(c: HoldoutCascade, out: Console) -> None:
    stages = ", ".join(f"{s.name} {s.n_decided}" for s in c.stages)
    out.print(wrapped(f"cascade on {c.n_items} holdout items: {stages}, a person {c.n_person}", out))
    if c.guarantee is not None:
        g = c.guarantee
        held = {True: "held", False: "NOT held", None: "untested"}[g.held]
        out.print(
            wrapped(
                f"guarantee: disagreement with the majority {fmt(g.disagreement)} on the {g.n_covered} decided "
                f"items, allowed {g.allowed_disagreement or 0.0:.3f}: {held}; agreement with each person "
                f"{fmt(c.vs_people)}",
                out,
            )
        )
    cost = c.cost or {}
    if cost:
        unit = cost.get("unit")
        per = "US$" if unit == "USD" else "tokens"
        line = (
            # "on every item": the configurations table's "alone" row pays only where that judge may decide
            f"cost per item: cascade {cost['cascade_per_item']:.4g} {per}, the last stage on every item "
            f"{cost['last_stage_alone_per_item']:.4g} {per}"
        )
        if cost.get("unpriced_models"):
            line += f" (no price for {', '.join(cost['unpriced_models'])}: give --prices)"
        out.print(wrapped(line, out))
    if c.configurations:
        configurations_table(c.configurations, "holdout", out)


def _grade_test(test: HoldoutTest, out: Console) -> None:
    passfail = test.judge_kind == "passfail"
    table = Table(title="On the holdout: judge vs each person, people vs each other (same items)", title_justify="left")
    cols = ["items", "agreement", "kappa"]
    cols += ["failures caught", "false flags"] if passfail else ["weighted kappa", "agreement at threshold"]
    for col in cols:
        table.add_column(col)
    for name, block in (("judged by the policy", test.on_judged_items), ("all, no policy", test.no_policy)):
        b = block or HoldoutFigures()
        for who, part in (("judge", b.vs_people), ("people", b.people)):
            f = part or PeopleAgreement()
            if passfail:
                flags = f.false_flags
                extra = [_caught(f.failures_caught), fmt(None if flags is None else flags.rate)]
            else:
                extra = [fmt(f.weighted_kappa), _agreement(f.at_threshold)]
            table.add_row(f"{name}: {who}", fmt(f.agreement), fmt(f.kappa), *extra)
    out.print(fitted(table, out))
    _category_reasons(test, out)
    _confidence_test(test, out)


def _category_reasons(test: HoldoutTest, out: Console) -> None:
    for cat, c in test.per_category.items():
        out.print(Text(f"{cat}: {c.conclusion.reason if c.conclusion else ''}"))


def _held_text(conclusion: CategoryConclusion | None) -> Text:
    if conclusion is None or conclusion.dev_decision != "judge":
        return Text("person (stands)")
    return {
        True: Text("held", style="green"),
        False: Text("NOT HELD", style="bold red"),
        None: Text("untested", style="yellow"),
    }[conclusion.held]
