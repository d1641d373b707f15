"""`compare` between runs whose judge changed: the rubric change as a prompt diff, outputs shown once."""

from __future__ import annotations

import json

from cli_helpers import run_cli


def test_compare_shows_the_rubric_diff_and_hides_identical_outputs(tmp_path, monkeypatch, capsys):
    project = tmp_path / "p"
    run_cli(monkeypatch, capsys, "init", str(project))
    monkeypatch.chdir(project)
    first = tmp_path / "1.json"
    run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(first))
    rubric = project / "rubric.toml"
    rubric.write_text(rubric.read_text().replace("an invented or wrong fact fails", "a vague answer fails too"))
    # The new judge also fails orders-01 (its right answer): one case changes verdict, same output.
    eval_file = project / "eval.toml"
    text = eval_file.read_text()
    rule = '[[provider.options.responses]]\nmatch = "costs \\\\$0\\\\.30\\\\."\ntext = "FAIL\\nToo vague."\n\n'
    head, sep, tail = text.partition("[[provider.options.responses]]")
    eval_file.write_text(head + rule + sep + tail)
    second = tmp_path / "2.json"
    run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(second))
    a, b = json.loads(first.read_text())["run_id"], json.loads(second.read_text())["run_id"]
    assert a != b

    assert run_cli(monkeypatch, capsys, "compare", a, b)[0] == 2  # different judges: refused unless allowed
    result_path = tmp_path / "c.json"
    code, out, _ = run_cli(monkeypatch, capsys, "compare", a, b, "--allow-different-judges", "--json", str(result_path))
    assert code == 0
    result = json.loads(result_path.read_text())
    (diff,) = result["judge_diffs"]
    assert diff["judge"] == "correct" and diff["a"]["template_hash"] != diff["b"]["template_hash"]
    removed = [line for line in diff["prompt_diff"] if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff["prompt_diff"] if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 1
    assert "an invented or wrong fact fails" in removed[0] and "a vague answer fails too" in added[0]
    (changed,) = result["changed"]
    assert changed["item_id"] == "orders-01" and changed["same_outputs"] is True
    assert out.count("A 10x15 cm print costs $0.30.") == 1  # the output once, not as old and new
    assert "old output" not in out and "+" in out and "a vague answer fails too" in out


def test_compare_diffs_the_prompt_when_the_old_run_came_from_the_cache(tmp_path, monkeypatch, capsys):
    """The old run's answers all came from the cache (no call logged under it): its prompt is the one the
    cache entry was asked with, so the rubric diff still shows, in the terminal, the JSON and the HTML report."""
    project = tmp_path / "p"
    run_cli(monkeypatch, capsys, "init", str(project))
    monkeypatch.chdir(project)
    rubric = project / "rubric.toml"
    old_rubric = rubric.read_text()

    def run(name: str) -> str:
        path = tmp_path / f"{name}.json"
        assert run_cli(monkeypatch, capsys, "run", "eval.toml", "--no-progress", "--json", str(path))[0] in (0, 1)
        return json.loads(path.read_text())["run_id"]

    first = run("1")
    rubric.write_text(old_rubric.replace("an invented or wrong fact fails", "a vague answer fails too <b>\u202e"))
    new = run("2")
    rubric.write_text(old_rubric)
    # Same rubric as the first run, under another name: a new run whose every answer is a cache hit.
    eval_file = project / "eval.toml"
    eval_file.write_text(eval_file.read_text().replace('name = "', 'name = "again ', 1))
    old = run("3")
    assert len({first, new, old}) == 3

    result_path = tmp_path / "c.json"
    code, out, _ = run_cli(
        monkeypatch, capsys, "compare", old, new, "--allow-different-judges", "--json", str(result_path)
    )
    assert code == 0
    (diff,) = json.loads(result_path.read_text())["judge_diffs"]
    removed = [line for line in diff["prompt_diff"] if line.startswith("-") and not line.startswith("---")]
    added = [line for line in diff["prompt_diff"] if line.startswith("+") and not line.startswith("+++")]
    assert len(removed) == len(added) == 1
    assert "an invented or wrong fact fails" in removed[0] and "a vague answer fails too" in added[0]
    assert "no call of it" not in out

    html = tmp_path / "c.html"
    code, _, _ = run_cli(
        monkeypatch, capsys, "report", "--compare", old, new, "--allow-different-judges", "-o", str(html)
    )
    assert code == 0
    page = html.read_text()
    assert 'id="judge-changes"' in page
    assert '<span class="add">+' in page and "a vague answer fails too &lt;b&gt;" in page
    assert "\u202e" not in page and "U+202E" in page  # the hidden character shown, not acting
