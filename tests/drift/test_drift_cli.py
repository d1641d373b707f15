"""`juge drift` against the mock server: two judges (two model versions) whose answers the server scripts, so the
share of anchor items on which they differ is known from the server's own rule (juge.testing.mockmodel); the
attribution splits a score change between two system runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli_helpers import run_cli, write_jsonl
from juge.store import Store
from juge.testing.mockmodel import expected_answer
from juge.testing.mockserver import MockConfig, serve_in_thread

# Each judge says FAIL on about a fifth of the items, independently (by a hash of model and prompt).
ANSWERS = ("PASS\nFine.",) * 4 + ("FAIL\nWrong.",)


@pytest.fixture
def no_keys(monkeypatch, tmp_path):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "ANTHROPIC_API_KEY", "ANTHROPIC_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("JUGE_HOME", str(tmp_path / "home"))


def judge_file(folder: Path, model: str) -> Path:
    path = folder / f"{model}.toml"
    path.write_text(f'name = "grader"\nsetup = "passfail"\nmodel = "{model}"\nprovider = "openai"\n'
                    'description = "The answer is right."\n')  # fmt: skip
    return path


def scripted_verdicts(config: MockConfig, db: Path, run_id: str) -> dict[str, str]:
    """What the server's rule answers to each logged request of a run: the verdict line, by item."""
    with Store(db) as store:
        requests = store.call_requests(run_id)
    return {r["meta"]["item_id"]: expected_answer(config, r["model"], r["messages"]).split("\n")[0] for r in requests}


def test_drift_reports_the_scripted_share_and_splits_a_score_change(monkeypatch, capsys, tmp_path, no_keys):
    items = [{"id": f"a{k}", "question": f"Question {k}?", "output": f"Answer {k}."} for k in range(60)]
    anchor = write_jsonl(tmp_path / "anchor.jsonl", items)
    labels = write_jsonl(tmp_path / "labels.jsonl", [
        {"item_id": f"a{k}", "rater_id": r, "label": "PASS" if (k + j) % 4 else "FAIL"}
        for k in range(60) for j, r in enumerate(("ann", "bob"))
    ])  # fmt: skip
    old, new = judge_file(tmp_path, "judge-2026-01"), judge_file(tmp_path, "judge-2026-06")
    db = tmp_path / "j.db"
    config = MockConfig(latency=0.0, answers=ANSWERS)
    with serve_in_thread(config) as server:
        common = ("--db", str(db), "--base-url", server.url, "--no-progress", "--resamples", "500")
        drift = ("drift", "--anchor", str(anchor), "--labels", str(labels), *common)
        code, out, err = run_cli(monkeypatch, capsys, *drift, "--judge", str(old), "--judge", str(new),
                                 "--json", str(tmp_path / "d.json"))  # fmt: skip
        assert code == 0, err
        result = json.loads((tmp_path / "d.json").read_text())
        want_old = scripted_verdicts(config, db, result["old"]["run_id"])
        want_new = scripted_verdicts(config, db, result["new"]["run_id"])
        differ = sorted(i for i in want_old if want_old[i] != want_new[i])
        assert 5 <= len(differ) <= 40  # the server's rule makes them differ on some items, not all
        assert sorted(c["item_id"] for c in result["changed"]) == differ
        assert result["n_changed"] == len(differ) and result["changed_share"]["value"] == pytest.approx(
            len(differ) / 60
        )
        votes = [json.loads(line) for line in labels.read_text().splitlines()]
        agree = sum(v["label"] == want_old[v["item_id"]] for v in votes) / len(votes)
        assert result["old"]["agreement"]["value"] == pytest.approx(agree)
        assert [m["field"] for c in result["moved"] for m in c["mismatches"]] == ["model"]
        assert result["conclusion"] in ("moved", "within noise") and result["conclusion"].upper() in out

        # Again, the old judge from its stored run: nothing is called (the new judge comes from the cache).
        requests = server.stats()["requests"]
        code, _, err = run_cli(monkeypatch, capsys, *drift, "--run", result["old"]["run_id"], "--judge", str(new),
                               "--json", str(tmp_path / "d2.json"))  # fmt: skip
        assert code == 0, err
        again = json.loads((tmp_path / "d2.json").read_text())
        assert server.stats()["requests"] == requests
        assert (again["n_changed"], again["difference"]) == (result["n_changed"], result["difference"])

        # Attribution: the old system run judged by the old judge, the new one (other outputs) by the new judge.
        system_new = write_jsonl(tmp_path / "v2.jsonl", [{**c, "output": c["output"] + " Better."} for c in items])
        ids = {}
        for name, cases, judge in (("a", anchor, old), ("b", system_new, new)):
            code, _, err = run_cli(monkeypatch, capsys, "run", "--cases", str(cases), "--judge", str(judge),
                                   *common[:4], "--no-progress", "--json", str(tmp_path / f"{name}.json"))  # fmt: skip
            assert code == 0, err
            ids[name] = json.loads((tmp_path / f"{name}.json").read_text())["run_id"]
        # Only the first 30 items are anchors here: the judge's part is measured on them.
        half = write_jsonl(tmp_path / "half.jsonl", items[:30])
        code, out, err = run_cli(monkeypatch, capsys, "drift", "--anchor", str(half), "--labels", str(labels),
                                 *common, "--judge", str(old), "--judge", str(new), "--old-run", ids["a"],
                                 "--new-run", ids["b"], "--json", str(tmp_path / "d3.json"))  # fmt: skip
        assert code == 0, err
    split = json.loads((tmp_path / "d3.json").read_text())["attribution"]
    # The old outputs are the anchor's: the old run's and the re-judged verdicts are the ones scripted above
    # (answered from the cache); the new run's outputs are new, so the server answered them.
    on_a, on_b = want_old, scripted_verdicts(config, db, ids["b"])
    with Store(db) as store:
        rejudged_ids = sorted(j.item_id for j in store.judgments(split["rejudged_run"]))
    assert rejudged_ids == sorted(c["id"] for c in items[:30]) and len(on_b) == 60
    rejudged = {i: want_new[i] for i in rejudged_ids}
    rate = lambda verdicts, keys: sum(verdicts[k] == "PASS" for k in keys) / len(keys)  # noqa: E731
    assert split["total_change"]["value"] == pytest.approx(rate(on_b, on_b) - rate(on_a, on_a))
    assert split["judge_part"]["value"] == pytest.approx(rate(rejudged, rejudged) - rate(on_a, rejudged))
    assert split["system_part"]["value"] == pytest.approx(split["total_change"]["value"] - split["judge_part"]["value"])
    assert split["judge_part"]["low"] <= split["judge_part"]["value"] <= split["judge_part"]["high"]
    assert "come from the judge" in out


def test_drift_refuses_what_it_cannot_compare(monkeypatch, capsys, tmp_path, no_keys):
    anchor = write_jsonl(tmp_path / "anchor.jsonl", [{"id": "a0", "question": "Q?", "output": "A."}])
    labels = write_jsonl(tmp_path / "labels.jsonl", [{"item_id": "a0", "rater_id": "ann", "label": "PASS"}])
    old = judge_file(tmp_path, "judge-2026-01")
    pair = tmp_path / "pair.toml"
    pair.write_text('name = "p"\nsetup = "pairwise"\nmodel = "m"\nprovider = "openai"\ndescription = "Better."\n')
    drift = ("drift", "--anchor", str(anchor), "--labels", str(labels), "--db", str(tmp_path / "j.db"))
    for extra, says in (
        (("--judge", str(old)), "--judge OLD --judge NEW"),  # one judge and no stored run
        (("--judge", str(old), "--judge", str(pair)), "different kinds"),
        (("--judge", str(old), "--judge", str(old), "--old-run", "x"), "--new-run"),
    ):
        code, _, err = run_cli(monkeypatch, capsys, *drift, *extra)
        assert code == 2 and says in err, err
    assert not (tmp_path / "j.db").exists()  # refused before any run
