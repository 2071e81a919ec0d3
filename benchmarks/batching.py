"""Does batched decoding pay on this CPU? Aggregate generation tokens/s of the embedded 1.5B when
N requests decode together in one llama.cpp server (N slots), for thread counts up to the machine's
cores, against one request alone. Each configuration runs in its own process, so each server's
memory is freed before the next. Run: python benchmarks/batching.py"""
from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor

from evoharness.agent.clients.embedded import EmbeddedModel, ServerSize, machine_cores, start_server
from evoharness.agent.clients.weights import WEIGHTS, ensure_weights

TOKENS = 32  # generated per request: enough that decoding, not the prompt, dominates
REPEATS = 2  # best of: other processes share the cores and only ever slow a run down
WEIGHTS_NAME = "qwen2.5-coder-1.5b"


def _body(i: int) -> dict:
    return {"messages": [{"role": "user", "content": f"Count from {100 * i} upwards, numbers "
                          "separated by spaces, and never stop."}],
            "max_tokens": TOKENS, "temperature": 0.0}


def measure(threads: int, requests: int) -> dict[str, float]:
    """Aggregate and per-request generation tokens/s with `requests` requests decoded together."""
    weights = WEIGHTS[WEIGHTS_NAME]
    server = start_server(ensure_weights(weights), ServerSize(threads=threads, slots=requests))
    model = EmbeddedModel(weights)
    model.complete(server, {"messages": [{"role": "user", "content": "hi"}], "max_tokens": 1})
    best = 0.0
    for repeat in range(REPEATS):
        started = time.perf_counter()
        with ThreadPoolExecutor(requests) as pool:
            replies = list(pool.map(lambda i: model.complete(server, _body(i + 10 * repeat)),
                                    range(requests)))
        tokens = sum(reply.tokens_out for reply in replies)
        best = max(best, tokens / (time.perf_counter() - started))
    return {"aggregate": best, "per_request": best / requests}


def _in_subprocess(threads: int, requests: int) -> dict[str, float]:
    out = subprocess.run([sys.executable, __file__, "--one", str(threads), str(requests)],
                         capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> None:
    if sys.argv[1:2] == ["--one"]:
        print(json.dumps(measure(int(sys.argv[2]), int(sys.argv[3]))))
        return
    cores = machine_cores()
    print(f"cores: {cores} cores")
    print(f"load average: {os.getloadavg()[0]:.1f} runnable processes")
    for threads in sorted({1, cores}):
        alone = _in_subprocess(threads, 1)["aggregate"]
        print(f"threads {threads} batch 1: {alone:.1f} tokens/s")
        for requests in (2, 4):
            figures = _in_subprocess(threads, requests)
            print(f"threads {threads} batch {requests}: {figures['aggregate']:.1f} tokens/s")
            print(f"threads {threads} batch {requests} speedup: "
                  f"{figures['aggregate'] / alone:.2f} x")


if __name__ == "__main__":
    main()
