"""Trace events: every step of a rollout (model call, tool call and result, middleware action,
error) as a frozen record, emitted to a sink. traces/ stores them; agent/ only produces them."""
from __future__ import annotations

import time
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

EventKind = Literal["model_call", "tool_call", "tool_result", "middleware", "error", "note"]


class CallTimings(BaseModel):
    """Where one model call's time went, as the server reports it; None where it does not say
    (Ollama names no cached tokens; a plain OpenAI server gives no times)."""

    model_config = ConfigDict(frozen=True)

    tokens_read: int | None = Field(None, ge=0)  # prompt tokens the server processed (prefill)
    tokens_cached: int | None = Field(None, ge=0)  # prompt tokens taken from its cache
    prefill_ms: float | None = Field(None, ge=0)
    decode_ms: float | None = Field(None, ge=0)
    # Far slower than this server has been (agent/clients/timings.py): a busy machine, not the
    # harness, made the call slow; stall_ms is the time it took beyond the server's best rates.
    stalled: bool = False
    stall_ms: float = Field(0.0, ge=0)


class Event(BaseModel):
    """One ordered step of a rollout. `content` is already cut to a bounded size by the producer."""

    model_config = ConfigDict(frozen=True)

    seq: int
    kind: EventKind
    name: str = ""  # tool name, model name, hook name or error class
    content: str = ""  # model reply text, tool output, error message
    data: dict[str, Any] = Field(default_factory=dict)  # arguments, error details, exit codes
    tokens_in: int = 0
    tokens_out: int = 0
    duration_ms: float = 0.0
    timings: CallTimings | None = None  # a model call's, where its server reports them
    ts: float = Field(default_factory=time.time)


class ModelTotals(BaseModel):
    """A rollout's model calls summed from its events (sub-agents' included): where its model
    time went. A figure no call reported stays None."""

    model_config = ConfigDict(frozen=True)

    model_calls: int = 0
    model_s: float = 0.0  # wall time inside model calls
    tokens_read: int | None = None
    tokens_cached: int | None = None
    prefill_s: float | None = None
    decode_s: float | None = None
    stalled_calls: int = 0
    stall_s: float = 0.0  # what those calls took beyond their server's best rates

    @classmethod
    def of(cls, events: list[Event]) -> ModelTotals:
        calls = [e for e in events if e.kind == "model_call"]
        timed = [e.timings for e in calls if e.timings is not None]

        def total(name: str, scale: float = 1.0) -> Any:
            values = [getattr(t, name) for t in timed if getattr(t, name) is not None]
            return sum(values) * scale if values else None

        return cls(model_calls=len(calls), model_s=sum(e.duration_ms for e in calls) / 1000,
                   tokens_read=total("tokens_read"), tokens_cached=total("tokens_cached"),
                   prefill_s=total("prefill_ms", 1e-3), decode_s=total("decode_ms", 1e-3),
                   stalled_calls=sum(t.stalled for t in timed),
                   stall_s=sum(t.stall_ms for t in timed) / 1000)


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class ListSink:
    """The default sink: keeps events in order in memory; the rollout runner writes them out."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
