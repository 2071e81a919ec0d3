"""Retrying transient model errors with exponential backoff, around any Model. Deciding what is
transient is each client's job; what to do once retries run out is the loop's."""
from __future__ import annotations

import time
from collections.abc import Callable
from evoharness.agent.model import Model, ModelClient, ModelError, ModelReply, ModelRequest


class RetryingModel(ModelClient):
    """Calls `inner` up to `attempts` times while it raises transient ModelErrors, sleeping
    backoff, 2*backoff, 4*backoff, ... in between; the last error is re-raised unchanged."""

    def __init__(
        self,
        inner: Model,
        attempts: int = 3,
        backoff: float = 1.0,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.inner = inner
        self.name = inner.name
        self.constrains_by_default = inner.constrains_by_default
        self.attempts = attempts
        self.backoff = backoff
        self._sleep = sleep

    def for_rollout(self, key: str) -> Model:
        """This client for one rollout (tasks/runner.py binds each rollout's client): the inner
        client's own, retried alike, when its replies draw on chance per rollout; else itself."""
        bind = getattr(self.inner, "for_rollout", None)
        if bind is None:
            return self
        return RetryingModel(bind(key), self.attempts, self.backoff, self._sleep)

    def respond(self, request: ModelRequest) -> ModelReply:
        for attempt in range(self.attempts):
            try:
                return self.inner.chat(request.messages, **request.options())
            except ModelError as error:
                if error.kind != "transient" or attempt == self.attempts - 1:
                    raise
                self._sleep(self.backoff * 2**attempt)
        raise AssertionError("unreachable: the loop returns or raises")
