"""`juge report --run` and `--compare`: the numbers are those of the summary / comparison they came from,
hostile text is escaped, and bad input exits 2 without writing anything."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from scipy.stats import binomtest

from cli_helpers import run_cli
from juge.config import load_eval
from juge.reports import render_report
from juge.reports.runs import build_compare_data, build_run_data
from juge.runner import run_eval
from juge.runs.compare import compare_runs
from juge.store import Store
from report_helpers import HOSTILE, assert_same_estimate, judged_run, md_tables, parse_html

BAKERY = Path(__file__).resolve().parents[2] / "examples" / "bakery" / "eval.toml"


@pytest.fixture(scope="module")
def bakery(tmp_path_factory):
    db = tmp_path_factory.mktemp("bakery") / "juge.db"
    with Store(db) as store:
        result = run_eval(load_eval(BAKERY), store, progress=False)
    return db, result


def test_run_report_numbers_equal_the_summary(bakery):
    db, result = bakery
    summary = result.summary.to_dict()
    with Store(db) as store:
        data = build_run_data(store, result.run_id)
    assert data["summary"] == json.loads(json.dumps(summary))  # the stored summary, unchanged
    html = render_report(data, "html")
    tables = parse_html(html).tables
    checks = {row[0]: row for row in tables["table-checks"][1:]}
    for name, c in summary["checks"].items():
        row = checks[name]
        assert (int(row[1]), int(row[2])) == (c["passed"], c["n"])
        low, high = binomtest(c["passed"], c["n"]).proportion_ci(method="exact")
        assert_same_estimate(row[3], {"value": c["rate"], "low": low, "high": high, "n": c["n"]})
    total = checks["all checks and judges (case passes)"]
    assert (int(total[1]), int(total[2])) == (summary["cases_passed"], summary["n_cases"])
    for k, entry in enumerate(summary["judges"].values(), start=1):
        rows = {r[0]: int(r[1]) for r in tables[f"table-judge-{k}"][1:]}
        assert {k.removeprefix("verdict "): v for k, v in rows.items() if k.startswith("verdict ")} == entry["verdicts"]
        assert {k.removeprefix("outcome "): v for k, v in rows.items() if k.startswith("outcome ")} == entry["outcomes"]
    assert entry_versions_in_header(html, summary)
    failing = {r[0]: r[2] for r in tables["table-failing"][1:]}
    assert failing == {"price-2": "fail", "gf-1": "fail", "gf-2": "missing", "cake-1": "fail"}
    assert list(failing.values()).count("fail") == summary["cases_failed"]
    assert list(failing.values()).count("missing") == summary["cases_missing"]
    assert "The facts list only brownies and almond cake as gluten-free, not sourdough." in html  # raw judge text
    md = render_report(data, "md")
    md_checks = next(t for t in md_tables(md) if t and t[0][0] in summary["checks"])
    for row in md_checks[:-1]:
        c = summary["checks"][row[0]]
        assert (int(row[1]), int(row[2])) == (c["passed"], c["n"])
    assert json.loads(render_report(data, "json"))["summary"]["cases_passed"] == summary["cases_passed"]


def test_run_with_a_score_gate_lists_the_cases_its_summary_counts(tmp_path):
    config = load_eval(BAKERY)
    config.spec.gate.min_score = 2  # the 3-criterion judge now passes or fails cases too
    with Store(tmp_path / "juge.db") as store:
        summary = run_eval(config, store, progress=False).summary.to_dict()
        data = build_run_data(store, summary["run_id"])
    assert data["summary"]["min_score"] == 2 and data["notes"] == []
    verdicts = [c["verdict"] for c in data["failing"]]
    assert (verdicts.count("fail"), verdicts.count("missing")) == (summary["cases_failed"], summary["cases_missing"])
    cake = next(c for c in data["failing"] if c["item_id"] == "cake-1")
    assert any("judge quality said FAIL" in r for r in cake["reasons"])
    assert all(j["counted"] for j in cake["judgments"])


def entry_versions_in_header(html: str, summary: dict) -> bool:
    header = html.split("</header>")[0]
    return all(e["template_hash"] in header and e["model"][0] in header for e in summary["judges"].values())


def test_unfinished_run_is_summarised_now_and_failing_cases_escape_hostile_text(tmp_path):
    with Store(tmp_path / "juge.db") as store:
        judged_run(
            store,
            ["fine", f"bad {HOSTILE}", "odd"],
            [
                {"match": "bad", "text": f"FAIL\nIt says {HOSTILE}"},
                {"match": "odd", "text": f"maybe {HOSTILE}"},  # unparsed: fails closed
            ],
            run_id="r1",
            failed_check=frozenset({"c0"}),
        )
        data = build_run_data(store, "r1")
    assert data["run"]["summary_source"].startswith("summarised now")
    assert data["n_failing"] == 3 and data["cases_passed"] == 0
    assert [c["verdict"] for c in data["failing"]] == ["fail", "fail", "missing"]  # check, FAIL, unparsed
    assert [o["count"] for o in data["judges"][0]["outcomes"]] == [2, 0, 1, 0]
    for fmt in ("html", "md"):
        text = render_report(data, fmt)
        assert "<script" not in text and "<img" not in text and "<b>x" not in text
        assert "&lt;script&gt;alert(&#34;x&#34;)" in text or '&lt;script&gt;alert("x")' in text
    parser = parse_html(render_report(data, "html"))
    assert set(parser.tags) & {"script", "img", "link", "iframe"} == set()


@pytest.fixture
def two_runs(tmp_path):
    db = tmp_path / "juge.db"
    with Store(db) as store:
        outputs = [f"answer {i}" for i in range(12)]
        judged_run(store, outputs, [{"match": "answer (1|2|3)\\b", "text": "FAIL\nrude"}], run_id="old")
        new = list(outputs)
        new[3] = "answer 3, revised"  # a new output: a new prompt, not the cached FAIL
        new[5] = f"new answer 5 {HOSTILE}"
        judged_run(
            store,
            new,
            [
                {"match": "answer (1|2)\\b", "text": "FAIL\nrude"},
                {"match": "new answer 5", "text": f"FAIL\nnow rude {HOSTILE}"},
            ],
            run_id="new",
        )
        judged_run(store, outputs, [], model="m2", run_id="other-judge")
    return db


def test_compare_report_numbers_equal_the_comparison(two_runs):
    with Store(two_runs) as store:
        expected = compare_runs(store, "old", "new", n_resamples=300).to_dict()
        data = build_compare_data(store, "old", "new", n_resamples=300)
    assert data["compare"] == expected
    assert expected["transitions"] == {"pass_to_fail": 1, "fail_to_pass": 1, "unchanged_pass": 8, "unchanged_fail": 2}
    html = render_report(data, "html")
    tables = parse_html(html).tables
    figures = {r[0].split(" (")[0]: r[1] for r in tables["table-figures"][1:]}
    assert_same_estimate(figures["pass rate, old"], expected["pass_rate_a"])
    assert_same_estimate(figures["pass rate, new"], expected["pass_rate_b"])
    assert_same_estimate(figures["difference new − old"], expected["difference_b_minus_a"])
    assert float(figures["exact McNemar p"]) == pytest.approx(expected["mcnemar_p"], rel=1e-3)
    t = expected["transitions"]
    assert tables["table-transitions"][1:] == [
        ["pass", str(t["unchanged_pass"]), str(t["pass_to_fail"])],
        ["fail", str(t["fail_to_pass"]), str(t["unchanged_fail"])],
    ]
    changed = [x["item_id"] for x in expected["changed"]]
    assert changed == ["c3", "c5"]
    assert all(f'data-item="{i}"' in html for i in changed)
    assert "not-comparable" not in html and "WARNING" not in html and "<script" not in html
    assert "new answer 5 &lt;script&gt;" in html and "answer 5</pre>" in html  # both raw outputs, escaped
    md = render_report(data, "md")
    assert "<script" not in md
    md_transitions = next(t for t in md_tables(md) if t and t[0][0] == "pass" and len(t[0]) == 3)
    assert md_transitions == [["pass", "8", "1"], ["fail", "1", "2"]]


def test_cli_run_and_compare_write_every_format(monkeypatch, capsys, two_runs, tmp_path):
    for fmt in ("html", "md", "json"):
        out = tmp_path / f"compare.{fmt}"
        code, stdout, _ = run_cli(
            monkeypatch,
            capsys,
            "report",
            "--compare",
            "old",
            "new",
            "--db",
            str(two_runs),
            "--resamples",
            "200",
            "-o",
            str(out),
            "--format",
            fmt,
        )
        assert code == 0 and f"wrote {out}" in stdout
    assert json.loads((tmp_path / "compare.json").read_text())["compare"]["n_paired"] == 12
    monkeypatch.chdir(tmp_path)
    code, stdout, _ = run_cli(monkeypatch, capsys, "report", "--run", "ol", "--db", str(two_runs))  # a prefix
    assert code == 0 and (tmp_path / "run-old.html").read_text().startswith("<!DOCTYPE html>")


def test_different_judges_are_refused_or_marked_not_comparable(monkeypatch, capsys, two_runs, tmp_path):
    out = tmp_path / "c.html"
    code, _, err = run_cli(
        monkeypatch, capsys, "report", "--compare", "old", "other-judge", "--db", str(two_runs), "-o", str(out)
    )
    assert code == 2 and "not comparable" in err and not out.exists()
    code, _, _ = run_cli(
        monkeypatch,
        capsys,
        "report",
        "--compare",
        "old",
        "other-judge",
        "--db",
        str(two_runs),
        "--allow-different-judges",
        "--resamples",
        "200",
        "-o",
        str(out),
    )
    assert code == 0
    html = out.read_text()
    assert 'id="not-comparable"' in html and "WARNING: NOT COMPARABLE" in html
    assert "m1" in html.split("</header>")[0] and "m2" in html.split("</header>")[0]


@pytest.mark.parametrize("args", [("--run", "nope"), ("--compare", "old", "nope")])
def test_bad_run_id_exits_2_and_writes_nothing(monkeypatch, capsys, two_runs, tmp_path, args):
    out = tmp_path / "r.html"
    code, _, err = run_cli(monkeypatch, capsys, "report", *args, "--db", str(two_runs), "-o", str(out))
    assert code == 2 and "no run 'nope'" in err and "juge runs" in err
    assert [p.name for p in tmp_path.iterdir() if not p.name.startswith("juge.db")] == []  # no report, no temp file


def test_missing_database_and_mixed_sources_exit_2(monkeypatch, capsys, tmp_path):
    code, _, err = run_cli(monkeypatch, capsys, "report", "--run", "x", "--db", str(tmp_path / "none.db"))
    assert code == 2 and "no juge database" in err and not (tmp_path / "none.db").exists()
    code, _, err = run_cli(monkeypatch, capsys, "report", "calibration.json", "--run", "x")
    assert code == 2 and "exactly one of" in err


@pytest.mark.parametrize(("suffix", "is_json"), [(".md", False), (".json", True)])
def test_run_report_format_follows_the_suffix_of_o(monkeypatch, capsys, two_runs, tmp_path, suffix, is_json):
    import juge.api

    out = tmp_path / f"run{suffix}"
    code, _, err = run_cli(monkeypatch, capsys, "report", "--run", "old", "--db", str(two_runs), "-o", str(out))
    assert code == 0, err
    for text in (out.read_text(), juge.api.run_report("old", db=two_runs, path=tmp_path / f"api{suffix}").read_text()):
        assert not text.startswith("<!DOCTYPE")
        if is_json:
            assert json.loads(text)["run"]["id"] == "old"


def test_run_report_refuses_an_unknown_format(two_runs, tmp_path):
    import juge.api
    from juge.errors import InputError

    with pytest.raises(InputError):
        juge.api.run_report("old", db=two_runs, path=tmp_path / "r.md", fmt="pdf")  # type: ignore[arg-type]
    assert not (tmp_path / "r.md").exists()
