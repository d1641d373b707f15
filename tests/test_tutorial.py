"""docs/tutorial.md, run as written: its `bash tutorial-N` blocks in order, against the mock model
server, with two raters labelling all 30 items in the labelling app in Chromium.

Blocks 1, 3 and 4 run in tmux at 80 columns; the terminal is saved to
test-artifacts/tutorial-terminal-80.txt and the report's summary page to
test-artifacts/tutorial-report-summary.png.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from pathlib import Path

import pytest

from browser_helpers import ARTIFACTS, BROWSER_MARKS
from juge.scaffold.cases import ITEMS
from juge.testing.mockserver import MockConfig, serve_in_thread
from label_helpers import live_server

sys.path.insert(0, str(Path(__file__).parent / "view"))
from view_helpers import view_process  # noqa: E402

REPO = Path(__file__).resolve().parents[1]
TUTORIAL = REPO / "docs" / "tutorial.md"
COLUMNS = 80

pytestmark = [*BROWSER_MARKS, pytest.mark.skipif(shutil.which("tmux") is None, reason="needs tmux")]


def tutorial_blocks() -> dict[str, str]:
    """The `bash tutorial-N` blocks of the tutorial, by N."""
    text = TUTORIAL.read_text(encoding="utf-8")
    return {m.group(1): m.group(2) for m in re.finditer(r"```bash tutorial-(\d+)\n(.*?)```", text, re.S)}


def _env(model_url: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "JUGE_"))}
    src = str(REPO / "src")
    env["PYTHONPATH"] = src + (os.pathsep + env["PYTHONPATH"] if env.get("PYTHONPATH") else "")
    env["JUGE_MODEL_URL"] = model_url
    env.pop("COLUMNS", None)
    env.pop("LINES", None)
    return env


class Terminal:
    """A tmux session of its own (own socket) at COLUMNS columns; commands run in bash inside it."""

    def __init__(self, env: dict[str, str], cwd: Path):
        self.socket = f"juge-tutorial-{uuid.uuid4().hex[:8]}"
        conf = cwd / ".tmux.conf"
        conf.write_text("set -g history-limit 100000\n")
        self.tmux = ["tmux", "-L", self.socket, "-f", str(conf)]
        passed = [
            a for k in ("PATH", "PYTHONPATH", "JUGE_MODEL_URL", "HOME") if k in env for a in ("-e", f"{k}={env[k]}")
        ]
        subprocess.run(
            [*self.tmux, "new-session", "-d", "-s", "t", "-x", str(COLUMNS), "-y", "50", "-c", str(cwd), *passed,
             "bash --norc --noprofile"],
            check=True,
        )  # fmt: skip
        self.send("export PS1='$ ' TERM=xterm-256color")
        self.send("clear")

    def send(self, line: str) -> None:
        subprocess.run([*self.tmux, "send-keys", "-t", "t", "-l", line], check=True)
        subprocess.run([*self.tmux, "send-keys", "-t", "t", "Enter"], check=True)

    def run(self, script: Path, timeout: float = 300) -> int:
        marker = f"__done_{uuid.uuid4().hex[:6]}__"
        self.send(f"bash -e {script}; echo {marker} $?")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            found = re.search(rf"^{marker} (\d+)$", self.capture(), re.M)
            if found:
                return int(found.group(1))
            time.sleep(0.5)
        raise AssertionError(f"{script} did not finish in {timeout} s:\n{self.capture()[-3000:]}")

    def capture(self) -> str:
        return subprocess.run(
            [*self.tmux, "capture-pane", "-p", "-t", "t", "-S", "-", "-E", "-"], capture_output=True, text=True
        ).stdout

    def close(self) -> None:
        subprocess.run([*self.tmux, "kill-server"], capture_output=True)


def script(path: Path, block: str) -> Path:
    """A block as a script that echoes each command before it runs (as a user would see it typed)."""
    lines = [line for line in block.splitlines() if line.strip()]
    path.write_text("".join(f"printf '%s\\n' {shlex.quote('$ ' + line)}\n{line}\n" for line in lines))
    return path


def label_everything(browser, base: str, link: str, rater: str, wrong: set[str]) -> int:  # noqa: ANN001
    """Sign in through the login link and label until no item is left: the right answer, except on the
    questions in `wrong` (a tie). Alternates the mouse and the keys."""
    right = {question: good for _, question, good, _ in ITEMS}
    context = browser.new_context(viewport={"width": 1280, "height": 900})
    page = context.new_page()
    page.goto(base + link[link.index("/login") :])
    with page.expect_navigation():
        page.keyboard.press("Enter")
    labelled = 0
    while page.locator('button[data-key="1"]').count():
        question = page.locator(".turn.user").inner_text().strip().splitlines()[-1].strip()
        left = page.locator("#answer-1 pre").inner_text().strip()
        key = "3" if question in wrong else ("1" if left == right[question] else "2")
        with page.expect_navigation():
            if labelled % 2:
                page.keyboard.press(key)
            else:
                page.locator(f'button[data-key="{key}"]').click()
        labelled += 1
    context.close()
    return labelled


def test_tutorial_end_to_end(browser, tmp_path):  # noqa: ANN001
    blocks = tutorial_blocks()
    assert sorted(blocks) == ["1", "2", "3", "4"]
    answers = ("Response A matches the facts.\n[[A]]", "Response B matches the facts.\n[[B]]", "Both fine.\n[[C]]")
    ARTIFACTS.mkdir(exist_ok=True)
    with serve_in_thread(MockConfig(answers=answers)) as server:
        env = _env(server.url)
        term = Terminal(env, tmp_path)
        try:
            # 1. init, prompt, run against the model server, show.
            assert term.run(script(tmp_path / "1.sh", blocks["1"])) == 0, term.capture()[-3000:]
            project = tmp_path / "my-judge"
            run = json.loads((project / "run.json").read_text())
            assert run["calls"] == 60 == server.stats()["answered"]  # 30 pairs, both orders
            assert run["judges"]["better"]["outcomes"]["unparsed"] == 0

            # 2. the labelling project and two raters (their links are printed once).
            out = subprocess.run(
                ["bash", "-e", str(script(tmp_path / "2.sh", blocks["2"]))],
                cwd=project, env=env, capture_output=True, text=True, timeout=120,
            )  # fmt: skip
            assert out.returncode == 0, out.stderr
            links = re.findall(r"http://\S+/login\?token=\S+", out.stdout)
            assert len(links) == 2
            # Bob calls three pairs a tie where Alice picks the right answer: people disagree a little.
            ties = {q for _, q, _, _ in ITEMS[::10]}
            with live_server(f"sqlite:///{project / '.juge' / 'juge.db'}") as base:
                assert label_everything(browser, base, links[0], "alice", set()) == 30
                assert label_everything(browser, base, links[1], "bob", ties) == 30

            # 3 and 4. status, export, calibrate, report, policy.
            for n in ("3", "4"):
                term.send(f"cd {project}")
                assert term.run(script(tmp_path / f"{n}.sh", blocks[n])) == 0, term.capture()[-3000:]
            screen = term.capture()
        finally:
            (ARTIFACTS / "tutorial-terminal-80.txt").write_text(term.capture())
            term.close()

    labels = [json.loads(line) for line in (project / "labels.jsonl").read_text().splitlines()]
    assert len(labels) == 60 and {lab["rater_id"] for lab in labels} == {"alice", "bob"}
    calibration = json.loads((project / "calibration.json").read_text())
    (headline,) = calibration["headline"]
    assert headline["judge"].startswith("better")
    # The first line calibrate printed is that sentence (as wrapped at 80 columns).
    flat = " ".join(screen.split())
    assert " ".join(headline["sentence"].split()) in flat
    assert calibration["ceiling"]["agreement"]["n"] == 30  # one pair of raters per item
    policy = json.loads((project / "policy.json").read_text())
    assert policy["judge"].startswith("better")
    assert (project / "JUDGE_POLICY.md").read_text().strip()
    # At 80 columns nothing is cut: every line fits and the judge's name is whole.
    assert max(len(line) for line in screen.splitlines()) <= COLUMNS
    assert "better" in screen and "…" not in screen

    # The report opens on its summary page: the same sentence, and a table per judge.
    page = browser.new_page(viewport={"width": 1280, "height": 900})
    page.goto((project / "report.html").as_uri())
    summary = page.locator("section.summary")
    assert " ".join(headline["sentence"].split()) in " ".join(summary.inner_text().split())
    assert summary.locator("table.summary-table").count() == 1
    page.screenshot(path=str(ARTIFACTS / "tutorial-report-summary.png"))
    page.close()
    # Its disagreements show their question and answers, read from the run's cases (no --items in the tutorial).
    disagreements = (project / "report.html").read_text().split('id="disagreements"', 1)[1]
    assert 'class="case"' in disagreements and "not in the calibration file" not in disagreements

    # juge view on the tutorial's store: the raw answers behind a category's disagreements, in three clicks or fewer.
    with view_process("--calibration", "calibration.json", "--labels", "labels.jsonl", cwd=project) as link:
        page = browser.new_page(viewport={"width": 1280, "height": 900})
        page.goto(link)  # the start page
        page.locator('a[href="/studies/0"]').click()  # 1: the calibration
        category = page.locator("a.category-link").filter(has_not_text=re.compile(r"^0 items$")).first
        category.click()  # 2: a category's disagreements
        page.wait_for_load_state()
        raw = page.locator(".disagreement .raw").all_inner_texts()
        assert raw and all(re.search(r"\[\[[ABC]\]\]", text) for text in raw), raw
        assert page.locator(".disagreement .labels").count() > 0  # alice's and bob's labels beside them
        page.screenshot(path=str(ARTIFACTS / "tutorial-view-disagreements.png"), full_page=True)
        page.locator(".disagreement .in-runs a").first.click()  # 3: the case in the run, with the prompts as sent
        page.wait_for_load_state()
        assert page.locator(".call .raw").count() == 2 and page.locator("details summary").count() >= 2
        page.close()
