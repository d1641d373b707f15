"""Make real files of other evaluation tools, offline: an Inspect AI eval log and a promptfoo results file.

Used by the slow tests (which run the tools) and to write the fixtures in tests/data/fixtures/ that the
fast tests read (`python tests/tool_logs.py` rewrites them).
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

GRADES = "CICCIICI"  # the grader's letter on items i0..i7 (C correct, I incorrect)
FIXTURES = Path(__file__).parent / "data" / "fixtures"


def write_inspect_log(folder: Path) -> Path:
    """An Inspect AI eval log of 8 samples graded by model_graded_qa, all models mockllm (no network)."""
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ModelOutput, ModelUsage, get_model
    from inspect_ai.scorer import model_graded_qa
    from inspect_ai.solver import generate

    def output(text: str) -> ModelOutput:
        out = ModelOutput.from_content(model="mockllm/model", content=text)
        out.usage = ModelUsage(input_tokens=1, output_tokens=1, total_tokens=2)  # else mockllm counts with tiktoken
        return out

    grader = get_model("mockllm/model", custom_outputs=[output(f"Reasoning.\nGRADE: {g}") for g in GRADES])
    answers = get_model("mockllm/model", custom_outputs=[output(f"answer {k}") for k in range(len(GRADES))])
    task = Task(
        dataset=[Sample(input=f"question {k}", target="a fine answer", id=f"i{k}") for k in range(len(GRADES))],
        solver=generate(),
        scorer=model_graded_qa(model=grader),
    )
    (log,) = eval(task, model=answers, log_dir=str(folder), display="none", max_samples=1)
    assert log.status == "success", log.error
    return Path(log.location)


PROMPTFOO_GRADER = """module.exports = class {
  id() { return 'offline-grader'; }
  async callApi(prompt) {
    const pass = prompt.includes('good');
    return { output: JSON.stringify({ pass, score: pass ? 1 : 0, reason: pass ? 'polite' : 'rude' }) };
  }
};
"""
PROMPTFOO_WORDS = ("good", "bad", "good", "good", "bad", "bad", "good", "bad")


def promptfoo_binary() -> str | None:
    return os.environ.get("JUGE_PROMPTFOO") or shutil.which("promptfoo")


def write_promptfoo_results(folder: Path, binary: str) -> Path:
    """`promptfoo eval -o results.json` over 8 tests with one llm-rubric each, graded by a local JS provider."""
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "grader.js").write_text(PROMPTFOO_GRADER)
    tests = "".join(
        f"  - description: case {k}\n    vars: {{question: 'a {word} question', id: i{k}}}\n"
        "    assert:\n      - type: llm-rubric\n        value: The answer is polite\n"
        for k, word in enumerate(PROMPTFOO_WORDS)
    )
    (folder / "promptfooconfig.yaml").write_text(
        'prompts: ["Answer the customer: {{question}}"]\nproviders: ["echo"]\n'
        "defaultTest:\n  options:\n    provider: file://grader.js\ntests:\n" + tests
    )
    env = {
        **os.environ,
        "HOME": str(folder / "home"),
        "PROMPTFOO_DISABLE_TELEMETRY": "1",
        "PROMPTFOO_DISABLE_UPDATE": "1",
        "PROMPTFOO_DISABLE_SHARING": "1",
    }
    subprocess.run(
        [binary, "eval", "-c", "promptfooconfig.yaml", "-o", "results.json", "--no-cache", "--no-table"],
        cwd=folder,
        env=env,
        check=False,  # promptfoo exits non-zero when a test fails, as half of these do
        capture_output=True,
        timeout=300,
    )
    return folder / "results.json"


if __name__ == "__main__":
    import tempfile

    FIXTURES.mkdir(exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        shutil.copy(write_inspect_log(Path(tmp) / "logs"), FIXTURES / "inspect_model_graded_qa.eval")
        binary = promptfoo_binary()
        if binary:
            shutil.copy(write_promptfoo_results(Path(tmp) / "pf", binary), FIXTURES / "promptfoo_results.json")
