"""Judge names, categories and labels are data: `juge calibrate` prints them literally, never as rich markup."""

from __future__ import annotations

from pathlib import Path

from cli_helpers import run_cli, write_jsonl

MARKUP = "judge[/]x[bold]"


def test_pairwise_tables_print_a_judge_name_with_markup_literally(tmp_path: Path, monkeypatch, capsys) -> None:
    items = write_jsonl(
        tmp_path / "items.jsonl",
        [
            {
                "item_id": f"i{k}",
                "question_id": k,
                "category": "[red]cat",
                "split": "dev",
                "question": "q",
                "answer_1": "a",
                "answer_2": "bb",
                "reference": None,
                "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A" if k % 2 else "B"}],
            }
            for k in range(6)
        ],
    )
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {
                "item_id": f"i{k}",
                "judge": MARKUP,
                "model": "m[/]",
                "prompt": "p",
                "order": o,
                "letter": letter,
                "outcome": "ok",
                "text": "[/] x",
            }
            for k in range(6)
            for o, letter in (("12", "A"), ("21", "B"))
        ],
    )
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(calls), "--resamples", "20"
    )
    assert code == 0, err
    assert f"{MARKUP}/p" in out  # in the rows and as the per-category column header
    assert out.count(f"{MARKUP}/p") >= 4 and "[red]cat" in out


def test_score_tables_print_a_judge_name_with_markup_literally(tmp_path: Path, monkeypatch, capsys) -> None:
    items = write_jsonl(
        tmp_path / "items.jsonl",
        [{"id": f"i{k}", "output": "x", "r1": k % 4 + 1, "r2": (k + 1) % 4 + 1} for k in range(8)],
    )
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {
                "item_id": f"i{k}",
                "judge": MARKUP,
                "model": "m",
                "prompt": "p",
                "verdict": k % 4 + 1,
                "outcome": "ok",
                "text": "x",
            }
            for k in range(8)
        ],
    )
    code, out, err = run_cli(
        monkeypatch,
        capsys,
        "calibrate",
        "--items",
        str(items),
        "--label-cols",
        "r1,r2",
        "--judgments",
        str(calls),
        "--resamples",
        "20",
    )
    assert code == 0, err
    assert f"{MARKUP}/p" in out


def test_control_and_bidi_characters_in_data_print_as_escapes(tmp_path: Path, monkeypatch, capsys) -> None:
    """A category and a judge name read from data files hold ESC [2J (clears the screen) and U+202E (reorders the
    line): calibrate prints both as escapes (the terminal every command prints to, juge.commands.console)."""
    evil = "cat\x1b[2J\u202eevil"
    items = write_jsonl(
        tmp_path / "items.jsonl",
        [
            {
                "item_id": f"i{k}", "question_id": k, "category": evil, "split": "dev", "question": "q",
                "answer_1": "a", "answer_2": "bb", "reference": None,
                "human_ratings": [{"rater_id": "r1", "label": "A"}, {"rater_id": "r2", "label": "A" if k % 2 else "B"}],
            }
            for k in range(40)
        ],
    )  # fmt: skip
    calls = write_jsonl(
        tmp_path / "judgments.jsonl",
        [
            {"item_id": f"i{k}", "judge": "j\x1b]0;title\x07udge", "model": "m", "prompt": "p", "order": o, "letter": letter,
             "outcome": "ok", "text": "x"}
            for k in range(40)
            for o, letter in (("12", "A"), ("21", "B"))
        ],
    )  # fmt: skip
    code, out, err = run_cli(
        monkeypatch, capsys, "calibrate", "--items", str(items), "--judgments", str(calls), "--resamples", "20"
    )
    assert code == 0, err
    assert "\x1b" not in out + err and "\u202e" not in out + err and "\x07" not in out + err
    assert "\\x1b[2J" in out and "\\u202e" in out and "j\\x1b]0;title" in out


def test_the_commands_console_keeps_its_styles_and_escapes_only_text() -> None:
    import io

    from juge.commands.console import Console

    buffer = io.StringIO()
    console = Console(file=buffer, force_terminal=True, color_system="standard", width=80)
    console.print("[bold]ok[/] a\x1b[2Jb \u2066x\u2069", highlight=False)
    written = buffer.getvalue()
    assert written.count("\x1b[") == 2  # bold on and reset: rich's own, from the style
    assert "a\\x1b[2Jb" in written and "\\u2066x\\u2069" in written
