"""Where a model call's time went, read from each server's own report (llama.cpp's `timings`,
OpenAI's and vLLM's cached-token usage, Ollama's eval counts and durations), and the watch that
marks a call as stalled: far slower than the same server has already been. Clients call these;
what the events and totals do with them is the loop's and traces/' business."""
from __future__ import annotations

import threading
from typing import Any

from evoharness.agent.events import CallTimings

# A call decoding or reading its prompt at under a quarter of the best rate this server has shown
# stalled: measured on this project's 2-core machine, a busy machine cut the embedded 1.5B from
# 6.2 to 0.6-1.1 tokens/s, while calls of one quiet run varied by well under a factor of two.
STALL_FACTOR = 4.0
MIN_DECODE_TOKENS = 8  # fewer tokens time too little to say anything about a rate
MIN_PREFILL_TOKENS = 32
_NS_PER_MS = 1e6


def llama_timings(payload: dict[str, Any]) -> CallTimings | None:
    """llama.cpp's `timings` (prompt_n read, cache_n cached, prompt_ms, predicted_ms) or, from a
    server without them, the usage's cached tokens (OpenAI, vLLM); None when neither is there."""
    timings = payload.get("timings")
    if isinstance(timings, dict) and "prompt_n" in timings:
        return CallTimings(tokens_read=_count(timings.get("prompt_n")),
                           tokens_cached=_count(timings.get("cache_n")),
                           prefill_ms=_ms(timings.get("prompt_ms")),
                           decode_ms=_ms(timings.get("predicted_ms")))
    usage = payload.get("usage") or {}
    details = usage.get("prompt_tokens_details") if isinstance(usage, dict) else None
    cached = _count(details.get("cached_tokens")) if isinstance(details, dict) else None
    if cached is None:
        return None
    prompt = _count(usage.get("prompt_tokens"))
    return CallTimings(tokens_cached=cached,
                       tokens_read=None if prompt is None else max(0, prompt - cached))


def ollama_timings(response: Any) -> CallTimings | None:
    """Ollama's prompt_eval_count (the prompt tokens it evaluated, cached ones not counted) and
    its durations in nanoseconds; it does not say how many tokens its cache held."""
    read = _count(getattr(response, "prompt_eval_count", None))
    prefill_ns = getattr(response, "prompt_eval_duration", None)
    decode_ns = getattr(response, "eval_duration", None)
    if read is None and prefill_ns is None and decode_ns is None:
        return None
    return CallTimings(tokens_read=read,
                       prefill_ms=None if prefill_ns is None else _ms(prefill_ns / _NS_PER_MS),
                       decode_ms=None if decode_ns is None else _ms(decode_ns / _NS_PER_MS))


class StallWatch:
    """The best prefill and decode rates one server has shown (seeded, when known, from this
    machine's measurement); `mark` flags a call far below either. Shared by a client's threads."""

    def __init__(self, decode_rate: float | None = None, prefill_rate: float | None = None
                 ) -> None:
        self.best = {"decode": decode_rate or 0.0, "prefill": prefill_rate or 0.0}
        self._lock = threading.Lock()

    def mark(self, timings: CallTimings | None, generated: int) -> CallTimings | None:
        if timings is None:
            return None
        rates = {"decode": _rate(generated, timings.decode_ms, MIN_DECODE_TOKENS),
                 "prefill": _rate(timings.tokens_read, timings.prefill_ms, MIN_PREFILL_TOKENS)}
        spent = {"decode": timings.decode_ms, "prefill": timings.prefill_ms}
        lost_ms = 0.0
        stalled = False
        with self._lock:
            for kind, rate in rates.items():
                if rate is None:
                    continue
                if rate * STALL_FACTOR < self.best[kind]:
                    stalled = True  # what it took beyond the best rate: the machine's share
                    lost_ms += (spent[kind] or 0.0) * (1 - rate / self.best[kind])
                self.best[kind] = max(self.best[kind], rate)
        if not stalled:
            return timings
        return timings.model_copy(update={"stalled": True, "stall_ms": lost_ms})


def _rate(tokens: int | None, ms: float | None, at_least: int) -> float | None:
    if tokens is None or ms is None or tokens < at_least or ms <= 0:
        return None
    return tokens / (ms / 1000)


def _count(value: Any) -> int | None:
    return int(value) if isinstance(value, (int, float)) and value >= 0 else None


def _ms(value: Any) -> float | None:
    return float(value) if isinstance(value, (int, float)) and value >= 0 else None
