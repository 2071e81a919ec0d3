"""Embedded model speed: prompt and generation tokens/s for the 0.5B and 1.5B models, measured
through EmbeddedModel (so what the agent loop gets). Run: python benchmarks/models.py"""
from __future__ import annotations

from evoharness.agent.clients import EmbeddedModel
from evoharness.agent.clients.weights import WEIGHTS
from evoharness.agent.model import Message

# Distinct prompts per measurement so llama.cpp's prompt cache cannot shorten a later one.
LONG = "\n".join(f"def f{i}(x):\n    return x * {i} + {i * 7} % 13" for i in range(40))


REPEATS = 3  # best of several: other processes share the cores and only ever slow a run down


def _count(start: int) -> Message:
    return Message(role="user", content=f"Count from {start} to 300, numbers separated by spaces.")


def _once(model: EmbeddedModel, i: int) -> tuple[float, float]:
    read = model.chat([Message(role="user", content=f"Summarise ({i}):\n{LONG}")], max_tokens=1)
    prompt_tps = read.tokens_in / (read.duration_ms / 1000)
    # Two same-length prompts, one answered with 1 token and one with up to 96: the difference
    # in time is generation alone.
    short = model.chat([_count(10 + 2 * i)], max_tokens=1)
    long = model.chat([_count(11 + 2 * i)], max_tokens=96)
    gen_tps = (long.tokens_out - 1) / ((long.duration_ms - short.duration_ms) / 1000)
    return prompt_tps, gen_tps


def measure(name: str) -> tuple[float, float]:
    model = EmbeddedModel(WEIGHTS[name])
    model.chat([Message(role="user", content="warm up")], max_tokens=1)  # loads the server
    runs = [_once(model, i) for i in range(REPEATS)]
    return max(r[0] for r in runs), max(r[1] for r in runs)


def main() -> None:
    for name in ("qwen2.5-coder-0.5b", "qwen2.5-coder-1.5b"):
        prompt_tps, gen_tps = measure(name)
        print(f"{name} prompt: {prompt_tps:.1f} tokens/s")
        print(f"{name} generation: {gen_tps:.1f} tokens/s")


if __name__ == "__main__":
    main()
