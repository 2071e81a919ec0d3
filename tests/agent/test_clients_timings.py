"""The stall watch: a call far below the best rates its server has shown is marked stalled."""
from __future__ import annotations

from evoharness.agent.clients.timings import STALL_FACTOR, StallWatch
from evoharness.agent.events import CallTimings


def _call(decode_tokens_per_s: float, tokens: int = 40) -> tuple[CallTimings, int]:
    return CallTimings(tokens_read=200, prefill_ms=10_000.0,
                       decode_ms=tokens / decode_tokens_per_s * 1000), tokens


def test_a_call_far_slower_than_the_server_has_been_is_stalled() -> None:
    watch = StallWatch()
    assert not watch.mark(*_call(6.0)).stalled  # the first call sets the pace
    assert not watch.mark(*_call(6.0 / STALL_FACTOR * 1.1)).stalled  # slow, within the factor
    assert watch.mark(*_call(6.0 / STALL_FACTOR * 0.9)).stalled
    assert not watch.mark(*_call(0.5, tokens=3)).stalled  # too few tokens to time a rate
    assert watch.mark(None, 10) is None


def test_a_stalled_call_says_how_long_it_took_beyond_the_best_rates() -> None:
    """At 1 token/s against a best of 8, a 40-token decode took 40 s where 5 s would do: 35 s
    lost; the prefill, within the factor, lost nothing. A call that did not stall lost none."""
    watch = StallWatch(decode_rate=8.0, prefill_rate=20.0)
    slow = watch.mark(*_call(1.0))
    assert slow.stalled and abs(slow.stall_ms - 35_000.0) < 1e-6
    assert watch.mark(*_call(8.0)).stall_ms == 0.0
    both = watch.mark(CallTimings(tokens_read=200, prefill_ms=50_000.0, decode_ms=40_000.0), 40)
    assert abs(both.stall_ms - (40_000.0 + 35_000.0)) < 1e-6  # 4 tokens/s read against 20


def test_a_machine_s_measured_rates_catch_a_first_call_that_stalls() -> None:
    watch = StallWatch(decode_rate=6.0, prefill_rate=15.0)
    slow_prefill = CallTimings(tokens_read=400, prefill_ms=150_000.0, decode_ms=8000.0)
    assert watch.mark(slow_prefill, 40).stalled  # 2.7 tokens/s read against 15
