"""Numbering and tagging of a rollout's events before they reach the sink, and the head+tail cut
every producer applies to long text. What the events mean is the loop's business; storing them is traces/'s."""
from __future__ import annotations

import itertools
from typing import Any

from evoharness.agent.events import Event, EventKind, EventSink
from evoharness.text import scrub, scrub_json

CONTENT_LIMIT = 4000
# A tool's output is kept whole up to the sandbox's own output cap (tasks/sandbox/limits.py): the model
# reads less of it (settings.tool_output_chars), the evidence and SQL can read it all.
TOOL_OUTPUT_LIMIT = 32_000


def clip(text: str, limit: int = CONTENT_LIMIT) -> str:
    """Keep the head and the tail of `text`: errors usually show at the end, context at the start."""
    if len(text) <= limit:
        return text
    half = limit // 2
    dropped = len(text) - 2 * half
    return f"{text[:half]}\n... [{dropped} characters cut] ...\n{text[-half:]}"


class Recorder:
    """Emits events with one shared sequence; a child (a sub-agent) shares the counter and tags its
    events' data, so a rollout's events stay totally ordered in one sink."""

    def __init__(self, sink: EventSink, tags: dict[str, Any] | None = None, _counter=None) -> None:
        self.sink = sink
        self.tags = tags or {}
        self._counter = _counter if _counter is not None else itertools.count()

    def child(self, **tags: Any) -> Recorder:
        return Recorder(self.sink, {**self.tags, **tags}, self._counter)

    def emit(self, kind: EventKind, name: str = "", content: str = "", *,
             limit: int = CONTENT_LIMIT, **fields: Any) -> Event:
        # Scrubbed: text from a middleware's JSON or a tool may hold a lone surrogate, and one
        # such character would make the whole trace file unwritable.
        data = scrub_json({**self.tags, **fields.pop("data", {})})
        event = Event(seq=next(self._counter), kind=kind, name=scrub(name),
                      content=scrub(clip(content, limit)), data=data, **fields)
        self.sink.emit(event)
        return event
