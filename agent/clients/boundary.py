"""The text boundary every client's respond() passes through: no lone UTF-16 surrogate goes out in a
request or comes back in a reply. A JSON body may carry "\\ud800"; json.loads turns it into a str
that no UTF-8 encoder accepts, so the next request (or the trace file) would fail. Each client
decorates its respond() with `text_boundary`; the wire formats are wire.py's."""
from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, TypeVar

from pydantic import BaseModel

from evoharness.agent.model import ModelReply, ModelRequest
from evoharness.text import scrub_json

Chat = TypeVar("Chat", bound=Callable[..., ModelReply])
_Record = TypeVar("_Record", bound=BaseModel)


def text_boundary(respond: Chat) -> Chat:
    """Wrap a client's respond(self, request): the request's messages are made encodable before
    the client sees them (text from tools and sandboxes too), and so is the reply it returns."""

    @functools.wraps(respond)
    def bounded(self: Any, request: ModelRequest) -> ModelReply:
        reply = respond(self, request.replace(messages=[encodable(m) for m in request.messages]))
        return encodable(reply)

    return bounded  # type: ignore[return-value]


def encodable(record: _Record) -> _Record:
    """`record` with every lone surrogate in its strings replaced by U+FFFD (itself when clean)."""
    data = record.model_dump()
    cleaned = scrub_json(data)
    return record if cleaned is data else type(record).model_validate(cleaned)
