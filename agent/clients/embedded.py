"""The embedded model: llama.cpp running in this process through the `xllamacpp` wheel, serving
the GGUF that weights.py assembled. Chat goes through the server's in-process OpenAI-style call."""
from __future__ import annotations

import threading
import time
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
# of an immutable resource, not run state.
_servers: dict[Path, Any] = {}
_servers_lock = threading.Lock()


def _server(path: Path) -> Any:
    with _servers_lock:
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
            _servers[path] = xllamacpp.Server(params)
        return _servers[path]


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
        server = _server(ensure_weights(self.weights))
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
