"""The tables of `juge policy derive` and `juge policy test`, printed from the typed results without the CLI: at 80 to
200 columns no line is wider than the terminal, every name and figure is whole, and the figures are the results'."""

from __future__ import annotations

import io

import pytest
from rich.cells import cell_len
from rich.console import Console

import juge
from juge.reports.policy_tables import print_policy, print_test
from juge.results import PolicyResult, format_estimate
from policy.grade_data import PASSFAIL_DEV, PASSFAIL_HOLDOUT, SCORE_DEV, SCORE_HOLDOUT, write_study

WIDTHS = (80, 120, 200)


def console(width: int) -> tuple[Console, io.StringIO]:
    buf = io.StringIO()
    return Console(file=buf, width=width, color_system=None, highlight=False), buf


@pytest.fixture(scope="module")
def policies(tmp_path_factory: pytest.TempPathFactory) -> dict[str, tuple[PolicyResult, list]]:
    """Each kind's policy, with the inputs it was derived from (for its holdout test)."""
    tmp = tmp_path_factory.mktemp("tables")
    demo = {"items": juge.demo_path("items.jsonl"), "judgments": juge.demo_path("judgments.jsonl")}
    out = {"pairwise": (juge.policy.derive(**demo, resamples=100), demo)}
    for kind, rows in (("passfail", PASSFAIL_DEV + PASSFAIL_HOLDOUT), ("score", SCORE_DEV + SCORE_HOLDOUT)):
        items, labels, judgments = write_study(tmp / kind, rows)
        inputs = {"items": items, "labels": labels, "judgments": [judgments]}
        out[kind] = (juge.policy.derive(**inputs, resamples=100), inputs)
    return out


def lines_of(buf: io.StringIO, width: int) -> list[str]:
    lines = buf.getvalue().splitlines()
    assert lines and max(cell_len(line) for line in lines) <= width and "…" not in buf.getvalue()
    return lines


@pytest.mark.parametrize("kind", ["pairwise", "passfail", "score"])
@pytest.mark.parametrize("width", WIDTHS)
def test_a_policy_prints_its_candidates_and_categories_whole(policies, kind: str, width: int) -> None:
    policy = policies[kind][0]
    (out, buf), (err, _) = console(width), console(width)
    print_policy(policy, out, err)
    lines = lines_of(buf, width)
    assert policy.selection is not None
    for name in [c.key for c in policy.selection.candidates] + list(policy.categories):
        assert any(name in line for line in lines), name
    if kind == "pairwise":  # judge vs person of each category, as the policy holds it, on one line
        for row in policy.categories.values():
            assert any(format_estimate(row.vs_people) in line for line in lines)
    if kind == "score":
        assert f"threshold: a case passes at {policy.threshold:g} or above (chosen on dev from the labels)" in lines


@pytest.mark.parametrize("width", WIDTHS)
def test_a_passfail_test_prints_what_the_judge_caught(policies, tmp_path, monkeypatch, width: int) -> None:
    monkeypatch.setenv("JUGE_HOME", str(tmp_path / "home"))
    policy, inputs = policies["passfail"]
    test = juge.policy.test(policy, **inputs, db=tmp_path / "j.db", resamples=100)
    out, buf = console(width)
    print_test(test, out)
    text = buf.getvalue()
    lines_of(buf, width)
    assert test.on_judged_items is not None and test.on_judged_items.vs_people is not None
    caught = test.on_judged_items.vs_people.failures_caught
    assert caught is not None and f"(caught {caught.k} of {caught.n})" in text
    assert test.conclusion is not None and f"Policy on holdout: {test.conclusion.reason}" in text.replace("\n", " ")
    for label, count in test.decisions.items():
        assert any(label in line and line.rstrip(" │").endswith(str(count)) for line in text.splitlines())
    # the test's title on one line, not wrapped inside the narrow decisions table (QA2)
    title = f"Policy {test.policy_hash[:12]} on split {test.split} ({test.n_items} items)"
    assert title in text.splitlines()


@pytest.mark.parametrize("kind", ["passfail", "score"])
def test_a_grade_policys_report_row_shows_the_gap_its_rule_decided_on(policies, kind: str) -> None:
    """The report's policy table: "Difference" of a PASS/FAIL or score category is the agreement gap the rule
    checked against the margin (issue 30), never n/a beside two figures."""
    from juge.reports.model import build_report_data
    from juge.reports.render import NOT_AVAILABLE, fmt_estimate, render_markdown

    policy, inputs = policies[kind]
    study = juge.calibrate(**inputs, split="dev", resamples=100)
    data = build_report_data(study, policy=policy)
    assert data["policy"] is not None
    rows = {c["name"]: c for c in data["policy"]["categories"]}
    md = render_markdown(data)
    for name, row in policy.categories.items():
        assert row.checks is not None
        agreement = next(c for k, c in row.checks.items() if k.startswith("agreement"))
        assert rows[name]["difference"]["value"] == agreement.gap == row.gap
        assert rows[name]["difference"]["value"] == pytest.approx(row.vs_people.value - row.ceiling.value, abs=2e-3)
        section = md.split("\n## Policy\n")[1]
        line = next(line for line in section.splitlines() if line.startswith(f"| {name} |"))
        assert line.split("|")[6].strip() == fmt_estimate(rows[name]["difference"], "rate") != NOT_AVAILABLE, line
    assert data["policy"]["difference_note"] and data["policy"]["difference_note"] in md
