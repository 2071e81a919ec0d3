"""The embedded model: llama.cpp running in this process through the `xllamacpp` wheel, serving
the GGUF that weights.py assembled. Chat goes through the server's in-process OpenAI-style call;
at exit the servers stop once the calls in flight are done."""
from __future__ import annotations

import atexit
import sys
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent.clients.boundary import text_boundary
from agent.clients.weights import WEIGHTS, ModelWeights, ensure_weights
from agent.clients.wire import openai_messages, openai_reply, tool_payload
from agent.model import Message, ModelError, ModelReply
from workspace.spec import ToolSpec

THREADS = 2  # the project's target machine has 2 cores
SLOTS = 2  # one per concurrent rollout (the default --workers): each keeps its own prompt cache
CONTEXT_PER_SLOT = 8192

# One llama.cpp server per weights file per process: loading a GGUF costs seconds and its memory
# must not be paid twice when the code agent and the evolve agent share a model. This is a cache
# of an immutable resource, not run state. `_state` guards it and the count of calls in flight.
_servers: dict[Path, Any] = {}
_state = threading.Condition()
_in_flight = 0
_exiting = False


def _server(path: Path) -> Any:
    """The server of `path` (started on first use); the caller holds `_state`."""
    if path not in _servers:
        import xllamacpp  # deferred: loading the native library is not free

        params = xllamacpp.CommonParams()
        params.model.path = str(path)
        # llama.cpp splits n_ctx across slots. With one slot, two rollouts alternating on it
        # evict each other's cached prompt, and every step re-reads the whole conversation.
        params.n_ctx = CONTEXT_PER_SLOT * SLOTS
        params.n_parallel = SLOTS
        params.cpuparams.n_threads = THREADS
        params.cpuparams_batch.n_threads = THREADS
        params.verbosity = -1  # llama.cpp's per-request logs would drown the CLI's output
        if not _servers:
            atexit.register(_stop_servers)
        _servers[path] = xllamacpp.Server(params)
    return _servers[path]


@contextmanager
def _serving(path: Path, name: str) -> Iterator[Any]:
    """The server for one chat call, counted while the call runs so that exit can wait for it."""
    global _in_flight
    with _state:
        if _exiting:
            raise ModelError("the process is exiting", kind="unavailable", field=name)
        server = _server(path)
        _in_flight += 1
    try:
        yield server
    finally:
        with _state:
            _in_flight -= 1
            _state.notify_all()


def _stop_servers() -> None:
    """At exit: refuse new calls, wait for those in flight, then stop each server's loop thread.

    A rollout abandoned at its deadline may still be inside a call (it cannot be cancelled).
    Exiting under it tore llama.cpp's globals down while its decode thread was computing, and the
    process died with SIGSEGV after all its work was done. A call ends within its max_tokens."""
    global _exiting
    with _state:
        _exiting = True
        if _in_flight:
            print(f"evoharness: waiting for {_in_flight} embedded model call(s) to finish "
                  "before exiting", file=sys.stderr, flush=True)
        _state.wait_for(lambda: _in_flight == 0)
        servers = list(_servers.values())
        _servers.clear()
    servers.clear()  # the last reference: each Server's destructor joins its loop thread


class EmbeddedModel:
    """Qwen2.5-Coder via in-process llama.cpp; the server starts on the first chat call."""

    def __init__(self, weights: ModelWeights = WEIGHTS["qwen2.5-coder-1.5b"]) -> None:
        self.weights = weights
        self.name = f"embedded:{weights.name}"

    @text_boundary
    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float = 0.0,
        json_mode: bool = False,
        max_tokens: int | None = None,
    ) -> ModelReply:
        body: dict[str, Any] = {"messages": openai_messages(messages), "temperature": temperature}
        if tools:
            body["tools"] = tool_payload(tools)
        if json_mode:
            body["response_format"] = {"type": "json_object"}
        if max_tokens is not None:
            body["max_tokens"] = max_tokens
        with _serving(ensure_weights(self.weights), self.name) as server:
            started = time.perf_counter()
            try:
                payload = server.handle_chat_completions(body)
            except RuntimeError as error:  # llama.cpp rejected the request (bad tools, too long)
                raise ModelError(str(error), kind="permanent", field=self.name) from error
        if isinstance(payload, dict) and "error" in payload:
            raise ModelError("the embedded model failed", kind="permanent", field=self.name,
                             value=payload["error"])
        duration_ms = (time.perf_counter() - started) * 1000
        return openai_reply(payload, model=self.name, duration_ms=duration_ms, where=self.name)
