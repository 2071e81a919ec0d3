"""Trace events: every step of a rollout (model call, tool call and result, middleware action,
error) as a frozen record, emitted to a sink. traces/ stores them; agent/ only produces them."""
from __future__ import annotations

import time
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

EventKind = Literal["model_call", "tool_call", "tool_result", "middleware", "error", "note"]


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
    ts: float = Field(default_factory=time.time)


class EventSink(Protocol):
    def emit(self, event: Event) -> None: ...


class ListSink:
    """The default sink: keeps events in order in memory; the rollout runner writes them out."""

    def __init__(self) -> None:
        self.events: list[Event] = []

    def emit(self, event: Event) -> None:
        self.events.append(event)
