"""The peers of `bench/throughput.py`: Inspect AI and DeepEval, each making one judge call per case against the mock
server, in a child process of their own (they patch or hold the event loop, start threads and read settings at
import; a row must not change the next one).

Run by throughput.py as ``python bench/peers.py NAME URL CALLS CONCURRENCY TAG``; prints one JSON line
``{"calls", "wall", "cpu", "answered"}`` where only the evaluation itself is timed (imports and set-up are not, as
for the Engine's row). The prompts are the juge judge's rendered messages of the same kind of cases, so every row
sends the same kind of request; each peer scores the answer its own way without a second call:

- **inspect**: ``inspect_ai.eval`` of a Task whose samples are those messages, ``generate()`` as the solver and
  ``includes()`` as the scorer, on the model ``openai-api/mock/<model>`` (Inspect's OpenAI-compatible provider,
  the mock as its base URL), ``max_connections`` = concurrency, logs in a temporary folder, no display.
- **deepeval**: ``deepeval.evaluate`` of a GEval metric with its evaluation steps given (so it makes no call to
  write them) over one test case per case, async with ``max_concurrent`` = concurrency, no cache, no display,
  telemetry off; its judge is a ``DeepEvalBaseLLM`` that sends the metric's prompt through the openai SDK
  (``AsyncOpenAI`` with its default client and SDK retries off, as DeepEval's own OpenAI model does) to the mock
  and hands GEval the score the mock's PASS/FAIL stands for, as the JSON GEval asks for (the mock answers
  PASS/FAIL, not GEval's JSON).

Nothing leaves the machine: the child's environment turns telemetry and update checks off and sends any
proxy-able traffic but the loopback to an address that refuses it.
"""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

PEERS = {"inspect": "inspect_ai", "deepeval": "deepeval"}
ROW_NAMES = {"inspect": "Inspect AI eval", "deepeval": "DeepEval evaluate (GEval)"}
# No network: telemetry and update checks off; anything that would go through a proxy goes nowhere.
QUIET_ENV = {
    "DEEPEVAL_TELEMETRY_OPT_OUT": "YES",
    "DEEPEVAL_UPDATE_WARNING_OPT_IN": "NO",
    "DEEPEVAL_DISABLE_DOTENV": "1",
    "CONFIDENT_OPEN_BROWSER": "NO",
    "INSPECT_TELEMETRY": "",
    "INSPECT_DISABLE_PLUGINS": "1",
    "HTTP_PROXY": "http://127.0.0.1:9",
    "HTTPS_PROXY": "http://127.0.0.1:9",
    "NO_PROXY": "127.0.0.1,localhost",
    "no_proxy": "127.0.0.1,localhost",
}


def installed(name: str) -> bool:
    return importlib.util.find_spec(PEERS[name]) is not None


def _messages(calls: int, tag: str) -> list[list[dict[str, str]]]:
    sys.path.insert(0, str(Path(__file__).parent))
    import throughput

    return throughput.prompts(throughput.judge_tasks(calls, tag))


def run_inspect(url: str, calls: int, concurrency: int, tag: str, folder: Path) -> tuple[float, float, int]:
    from inspect_ai import Task, eval
    from inspect_ai.dataset import Sample
    from inspect_ai.model import ChatMessageSystem, ChatMessageUser
    from inspect_ai.scorer import includes
    from inspect_ai.solver import generate

    from juge.testing.mockserver import MockConfig

    os.environ["MOCK_BASE_URL"] = url
    os.environ["MOCK_API_KEY"] = "not-needed"
    kinds = {"system": ChatMessageSystem, "user": ChatMessageUser}
    samples = [
        Sample(input=[kinds[m["role"]](content=m["content"]) for m in messages], target="PASS", id=i)
        for i, messages in enumerate(_messages(calls, tag))
    ]
    task = Task(dataset=samples, solver=generate(), scorer=includes())
    cpu, wall = time.process_time(), time.perf_counter()
    logs = eval(
        task,
        model=f"openai-api/mock/{MockConfig().model}",
        max_connections=concurrency,
        max_samples=concurrency,
        max_retries=0,
        display="none",
        log_dir=str(folder),
        temperature=0.0,
        max_tokens=1024,
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    log = logs[0]
    if log.status != "success":
        raise SystemExit(f"inspect: the eval ended {log.status}: {log.error}")
    answered = sum(1 for s in log.samples or [] if s.output.completion)
    return wall, cpu, answered


def run_deepeval(url: str, calls: int, concurrency: int, tag: str, folder: Path) -> tuple[float, float, int]:
    os.chdir(folder)  # DeepEval writes its .deepeval folder beside the caller
    import openai
    from deepeval import evaluate
    from deepeval.evaluate.configs import AsyncConfig, CacheConfig, DisplayConfig
    from deepeval.metrics import GEval
    from deepeval.models import DeepEvalBaseLLM
    from deepeval.test_case import LLMTestCase, LLMTestCaseParams

    from juge.testing.mockserver import MockConfig

    model_name = MockConfig().model
    answered = 0

    class MockJudge(DeepEvalBaseLLM):
        """GEval's judge: one chat call per prompt to the mock; its PASS/FAIL becomes GEval's score JSON."""

        def __init__(self) -> None:
            # the SDK's default client, as DeepEval's own OpenAI model builds it (retries left to DeepEval)
            self.client = openai.AsyncOpenAI(base_url=url, api_key="not-needed", max_retries=0, timeout=60)
            super().__init__(model_name)

        def load_model(self) -> Any:
            return self.client

        def get_model_name(self) -> str:
            return model_name

        def generate(self, prompt: str, schema: Any = None) -> Any:
            raise NotImplementedError("the benchmark runs DeepEval async only")

        async def a_generate(self, prompt: str, schema: Any = None) -> Any:
            nonlocal answered
            completion = await self.client.chat.completions.create(
                model=model_name, messages=[{"role": "user", "content": prompt}], temperature=0.0, max_tokens=1024
            )
            text = completion.choices[0].message.content or ""
            answered += bool(text)
            verdict, _, reason = text.partition("\n")
            return json.dumps({"score": 10 if verdict == "PASS" else 0, "reason": reason})

    metric = GEval(
        name="helpful",
        evaluation_steps=["Decide whether the answer does what the customer asked."],
        evaluation_params=[LLMTestCaseParams.INPUT, LLMTestCaseParams.ACTUAL_OUTPUT],
        model=MockJudge(),
        async_mode=True,
    )
    cases = [
        LLMTestCase(input=messages[-1]["content"], actual_output=messages[-1]["content"][-80:])
        for messages in _messages(calls, tag)
    ]
    cpu, wall = time.process_time(), time.perf_counter()
    evaluate(
        test_cases=cases,
        metrics=[metric],
        async_config=AsyncConfig(run_async=True, max_concurrent=concurrency, throttle_value=0),
        cache_config=CacheConfig(write_cache=False, use_cache=False),
        display_config=DisplayConfig(show_indicator=False, print_results=False, verbose_mode=False),
    )
    cpu, wall = time.process_time() - cpu, time.perf_counter() - wall
    return wall, cpu, answered


def main() -> None:
    name, url, calls, concurrency, tag = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
    with tempfile.TemporaryDirectory() as tmp:
        runner = run_inspect if name == "inspect" else run_deepeval
        wall, cpu, answered = runner(url, calls, concurrency, tag, Path(tmp))
    print(json.dumps({"calls": calls, "wall": wall, "cpu": cpu, "answered": answered}))


if __name__ == "__main__":
    main()
