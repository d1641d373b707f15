"""Benchmark: the local judge (llama.cpp) through juge vs llama-cpp-python called directly.

Workload: the live demo judge's prompts (`juge.live_demo.live_judge`: the
built-in pairwise template, constrained; instructions first, the pair last) for
`--pairs` seeded pairs of the demo's dev split, in both orders, on the packaged
Gemma 3 270M Q4_K_M. Both sides use the same loaded model and thread count;
each prompt runs `--repeats` times per side, alternating sides, and the fastest
run counts, so that load from other processes disturbs neither side more.

1. Prompt tokens/s: a constrained A/B/C verdict through `LlamaCppProvider`
   (prefix reuse off, so every prompt token is evaluated) vs `Llama.reset()` +
   `Llama.eval(tokens)` + reading the last logits.
2. Generated tokens/s: `--gen-tokens` tokens at temperature 0 through the
   provider's text path vs `Llama.create_completion` on the same tokens. Each
   prompt is cached first on both sides, so the timed call is generation.
3. Prefix reuse: each verdict after the previous one in the sequence, with the
   KV cache of their shared prefix kept vs cleared (tokens evaluated and time).

    python bench/local_judge.py [--pairs 4] [--threads 1] [--gen-tokens 24] [--repeats 3]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from importlib import resources

import numpy as np

from juge.data.adapters import read_pairwise_items
from juge.live_demo import choose_pairs, live_judge
from juge.providers.base import Request
from juge.providers.llamacpp import LlamaCppProvider, tokenize_prompt


def demo_requests(n_pairs: int, model: str) -> list[Request]:
    """The live demo judge's constrained requests, as the engine builds them."""
    items = resources.files("juge") / "demo_data" / "items.jsonl"
    with resources.as_file(items) as path:
        cases = [c for c in read_pairwise_items(path).cases if c.split == "dev"]
    judge = live_judge(model)
    return [
        Request(
            messages=tuple(judge.render(case, order)),
            model=judge.model,
            temperature=judge.temperature,
            max_tokens=judge.max_tokens,
            allowed=judge.allowed(),
        )
        for case in choose_pairs(cases, n_pairs, seed=0)
        for order in judge.orders(case)
    ]


def timed(call) -> tuple[float, object]:
    started = time.perf_counter()
    result = call()
    return time.perf_counter() - started, result


def alternate(
    sides: dict[str, Callable[[], object]], repeats: int, before: Callable[[], object] | None = None
) -> dict[str, tuple[float, object]]:
    """The fastest of `repeats` runs of each side (sides alternate; `before` runs untimed before each run).

    The minimum is the estimate least disturbed by other processes (as `timeit` advises).
    """
    best: dict[str, tuple[float, object]] = {}
    for r in range(repeats):
        for side in sorted(sides, reverse=r % 2 == 1):
            if before:
                before()
            seconds, result = timed(sides[side])
            if side not in best or seconds < best[side][0]:
                best[side] = (seconds, result)
    return best


def prompt_throughput(provider: LlamaCppProvider, requests: list[Request], repeats: int) -> tuple[float, float]:
    llm = provider.load().llm
    provider.reuse_prefix = False
    times = {"juge": 0.0, "direct": 0.0}
    tokens = 0
    for request in requests:
        prompt = tokenize_prompt(llm, request.messages)
        tokens += len(prompt)

        def direct() -> np.ndarray:
            llm.reset()
            llm.eval(prompt)
            return np.ctypeslib.as_array(llm._ctx.get_logits_ith(-1), shape=(llm.n_vocab(),)).copy()

        best = alternate({"juge": lambda: asyncio.run(provider.complete(request)), "direct": direct}, repeats)
        for side, (seconds, _) in best.items():
            times[side] += seconds
    return tokens / times["juge"], tokens / times["direct"]


def generation_throughput(
    provider: LlamaCppProvider, requests: list[Request], n: int, repeats: int
) -> tuple[float, float]:
    llm = provider.load().llm
    provider.reuse_prefix = True
    times = {"juge": 0.0, "direct": 0.0}
    counts = {"juge": 0, "direct": 0}
    for request in requests:
        prompt = tokenize_prompt(llm, request.messages)
        text = Request(request.messages, model=request.model, temperature=0.0, max_tokens=n)

        def juge() -> int:
            return asyncio.run(provider.complete(text)).tokens_out

        def direct() -> int:
            result = llm.create_completion(prompt=prompt, max_tokens=n, temperature=0.0, stop=["<end_of_turn>"])
            return result["usage"]["completion_tokens"]

        def cache_prompt() -> None:
            llm.create_completion(prompt=prompt, max_tokens=1, temperature=0.0)

        best = alternate({"juge": juge, "direct": direct}, repeats, before=cache_prompt)
        for side, (seconds, generated) in best.items():
            times[side] += seconds
            counts[side] += generated
    return counts["juge"] / times["juge"], counts["direct"] / times["direct"]


def prefix_reuse(provider: LlamaCppProvider, requests: list[Request], repeats: int) -> dict[str, tuple[float, int]]:
    """Each verdict right after the previous one in the sequence, with the shared prefix kept vs cleared."""
    out = {"kept": [0.0, 0], "cleared": [0.0, 0]}
    for previous, request in zip(requests, requests[1:]):

        def cache_previous() -> None:
            provider.reuse_prefix = True
            provider.complete_sync(previous)

        def verdict(reuse: bool) -> Callable[[], int]:
            def call() -> int:
                provider.reuse_prefix = reuse
                return provider.complete_sync(request).raw["tokens_evaluated"]

            return call

        best = alternate({"kept": verdict(True), "cleared": verdict(False)}, repeats, before=cache_previous)
        for side, (seconds, evaluated) in best.items():
            out[side][0] += seconds
            out[side][1] += evaluated
    return {side: (t, n) for side, (t, n) in out.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--pairs", type=int, default=4, help="demo pairs (each judged in both orders)")
    parser.add_argument("--threads", type=int, default=1, help="llama.cpp threads (both sides)")
    parser.add_argument("--gen-tokens", type=int, default=24, help="tokens generated per prompt")
    parser.add_argument("--repeats", type=int, default=3, help="runs per prompt and side; the fastest counts")
    args = parser.parse_args()

    provider = LlamaCppProvider(n_threads=args.threads)
    version = provider.load().version
    requests = demo_requests(args.pairs, version)
    print(
        f"model: {version}; {len(requests)} prompts ({args.pairs} pairs x 2 orders), {args.threads} thread(s), "
        f"fastest of {args.repeats} alternating runs per prompt"
    )
    provider.complete_sync(requests[0])  # warm up

    juge_pp, direct_pp = prompt_throughput(provider, requests, args.repeats)
    print(f"prompt tokens/s     juge {juge_pp:8.1f}   direct {direct_pp:8.1f}   ratio {juge_pp / direct_pp:.3f}")
    juge_tg, direct_tg = generation_throughput(provider, requests, args.gen_tokens, args.repeats)
    print(f"generated tokens/s  juge {juge_tg:8.1f}   direct {direct_tg:8.1f}   ratio {juge_tg / direct_tg:.3f}")
    reuse = prefix_reuse(provider, requests, args.repeats)
    (t_off, n_off), (t_on, n_on) = reuse["cleared"], reuse["kept"]
    print(
        f"prefix reuse        cleared: {n_off} tokens evaluated in {t_off:.2f} s; "
        f"kept: {n_on} tokens in {t_on:.2f} s; saved {t_off - t_on:.2f} s ({1 - t_on / t_off:.0%}), "
        f"{n_off - n_on} tokens ({1 - n_on / n_off:.0%})"
    )


if __name__ == "__main__":
    main()
