"""Common random numbers for paired rollouts: each model call of a rollout samples from its own
seed, a hash of the rollout's sampling key and the call's number. The two arms of one pair of a
change's trial share a key (tasks/results.py `sampling_key`), so while their transcripts agree
their replies agree too, as far as the server computes alike, and the pair differs where the
change made it differ rather than where the sampler happened to. Without it, the 1.5B's very
first reply differed between the arms of 90 of the 98 pairs of `done-guard`'s second trial,
though the guard acts only after that reply. With it, llama.cpp still parts them where it
computes differently (what it batches, what its prompt cache held): in an A/A trial the first
reply was the same in 12 of 32 pairs against 2 of 32, and the outcomes no more alike
(benchmarks/pairing.py, docs/trial.md)."""
from __future__ import annotations

import hashlib
import itertools
from typing import Any

from evoharness.agent.model import Message, Model, ModelReply


def call_seed(key: str, number: int) -> int:
    """The seed of call `number` of the rollouts keyed `key`: 31 bits, so never llama.cpp's
    "random seed" value (2**32 - 1)."""
    digest = hashlib.sha256(f"{key}|{number}".encode()).digest()
    return int.from_bytes(digest[:4], "big") >> 1


class SeededCalls:
    """`inner` for one rollout, each call carrying its seed (a call that names its own keeps
    it). The count is the rollout's own: a sub-agent's or a summary's call takes the next seed."""

    def __init__(self, inner: Model, key: str) -> None:
        self.inner = inner
        self.name = inner.name
        self.constrains_by_default = inner.constrains_by_default
        self.key = key
        self._calls = itertools.count()

    def chat(self, messages: list[Message], **options: Any) -> ModelReply:
        seed = call_seed(self.key, next(self._calls))
        return self.inner.chat(messages, **{"seed": seed, **options})
