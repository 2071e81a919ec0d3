"""The one small protocol every model client implements, the one request a call makes
(ModelRequest), and the messages it speaks. Clients (Ollama, OpenAI-compatible, embedded
llama.cpp, the scripted doubles) live in agent/clients/, each a ModelClient."""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Literal, Protocol

from pydantic import BaseModel, ConfigDict, Field

from evoharness.agent.events import CallTimings
from evoharness.errors import EvoError
from evoharness.workspace.spec import ToolSpec

Role = Literal["system", "user", "assistant", "tool"]


class ToolCall(BaseModel):
    model_config = ConfigDict(frozen=True)

    id: str
    name: str
    # A dict when the model produced valid JSON; the raw string otherwise, so the loop can
    # return a structured error instead of guessing.
    arguments: dict[str, Any] | str


class Message(BaseModel):
    role: Role
    content: str = ""
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tool_call_id: str | None = None
    name: str | None = None  # the tool's name on role="tool" messages


class Runaway(BaseModel):
    """Why a client cut a reply short (agent/clients/runaway.py): the unit it kept repeating, and
    the text as decoded up to the cut."""

    model_config = ConfigDict(frozen=True)

    unit: str
    decoded: str


class ModelReply(BaseModel):
    model_config = ConfigDict(frozen=True)

    content: str
    tool_calls: list[ToolCall] = Field(default_factory=list)
    tokens_in: int = 0  # as reported by the server
    tokens_out: int = 0
    duration_ms: float = 0.0
    model: str = ""
    timings: CallTimings | None = None  # prefill and decode, where the server reports them
    runaway: Runaway | None = None  # set when the client stopped a reply that repeated itself


ErrorKind = Literal["transient", "permanent", "unavailable"]


class ModelError(EvoError):
    """A model call that failed. transient: retry with backoff; unavailable: the server cannot be
    reached (the rollout is an infra_error); permanent: the request itself is wrong."""

    def __init__(self, message: str, *, kind: ErrorKind, **where: Any) -> None:
        self.kind = kind
        super().__init__(message, **where)


# A dataclass, not a pydantic model, because its `schema` field would shadow BaseModel.schema;
# cost decides nothing: built once per model call, 4.6 us with a 40-message conversation against
# 6.9 us for a frozen pydantic model of the same fields (measured on the 2-core dev machine).
@dataclass(frozen=True, slots=True, kw_only=True)
class ModelRequest:
    """One model call, the one place its options are written out; every client takes it.

    `schema`: a JSON schema the reply's content must follow (the server constrains decoding to
    it; implies json_mode). `context_tokens`: the conversation's context budget; a server that
    takes a context size is sized to hold it and the reply. `seed`: the sampler's seed, for a
    server that takes one (the same prompt and seed draw the same reply, as far as the server
    computes alike); None draws afresh."""

    messages: list[Message]
    tools: list[ToolSpec] | None = None
    temperature: float = 0.0
    json_mode: bool = False
    max_tokens: int | None = None
    schema: dict[str, Any] | None = None
    context_tokens: int | None = None
    seed: int | None = None

    def replace(self, **changes: Any) -> ModelRequest:
        return dataclasses.replace(self, **changes)

    def options(self) -> dict[str, Any]:
        """Every field but the messages, as `Model.chat`'s keyword arguments."""
        return {f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                if f.name != "messages"}


class Model(Protocol):
    name: str
    # Whether `schema` is sent when a harness leaves constrained decoding on "auto": true where the
    # server is known to enforce a JSON schema (llama.cpp embedded, Ollama).
    constrains_by_default: bool

    def chat(self, messages: list[Message], **options: Any) -> ModelReply:
        """One completion; `options` are ModelRequest's fields (an unknown one is a TypeError).
        Raises ModelError; never returns a half-read reply."""
        ...


class ModelClient:
    """What every client builds on: `chat` (the Model protocol) makes the call's ModelRequest
    and hands it to `respond`, the one method a client implements."""

    name: str
    constrains_by_default: bool = False

    def chat(self, messages: list[Message], **options: Any) -> ModelReply:
        return self.respond(ModelRequest(messages=messages, **options))

    def respond(self, request: ModelRequest) -> ModelReply:
        raise NotImplementedError
