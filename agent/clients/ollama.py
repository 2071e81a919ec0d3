"""The Ollama client: the Model protocol over the official `ollama` package (native tool calls,
JSON format, token counts and timings from the server, a context size that holds the whole
conversation, replies streamed so that one that runs away is stopped). Retries are retry.py's
job."""
from __future__ import annotations

import json
import os
import time
from typing import Any

import httpx
import ollama
import pydantic

from evoharness.agent.clients.boundary import text_boundary
from evoharness.agent.clients.runaway import StreamedText
from evoharness.agent.clients.speed import stall_watch
from evoharness.agent.clients.timings import ollama_timings
from evoharness.agent.clients.wire import status_error, tool_payload, transport_error, undecodable
from evoharness.agent.model import Message, ModelClient, ModelReply, ModelRequest, ToolCall

DEFAULT_HOST = "http://127.0.0.1:11434"
# num_ctx is asked for in steps, so the calls of one conversation ask for the same size: Ollama
# loads the model again whenever it changes. Without it a stock Ollama answers in its default
# context (2,048 or 4,096 tokens) and cuts a longer prompt from the front, system prompt first.
CONTEXT_STEP = 1024
CHARS_PER_TOKEN = 3  # fewer than most text needs, so the estimate errs on the large side
TEMPLATE_TOKENS = 16  # the chat template's role markers, per message


class OllamaModel(ModelClient):
    """One model on one Ollama server; `host` defaults to OLLAMA_HOST, then Ollama's default."""

    constrains_by_default = True  # `format` takes a JSON schema (Ollama >= 0.5, llama.cpp grammars)

    def __init__(self, name: str, host: str | None = None, timeout: float = 300.0) -> None:
        self.name = name
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self._where = f"{self.host}/api/chat"
        self._client = ollama.Client(host=self.host, timeout=timeout)
        self._watch = stall_watch(name)

    @text_boundary
    def respond(self, call: ModelRequest) -> ModelReply:
        options: dict[str, Any] = {"temperature": call.temperature, "num_ctx": context_size(
            call.messages, call.context_tokens, call.max_tokens)}
        if call.max_tokens is not None:
            options["num_predict"] = call.max_tokens
        if call.seed is not None:
            options["seed"] = call.seed
        request = dict(model=self.name, messages=[_ollama_message(m) for m in call.messages],
                       tools=tool_payload(call.tools), options=options,
                       format=call.schema if call.schema is not None
                       else "json" if call.json_mode else None)
        started = time.perf_counter()
        try:
            if call.tools:  # native tool calls come whole
                response = self._client.chat(**request, stream=False)
                return self._reply(response, (time.perf_counter() - started) * 1000)
            return self._streamed(request, started)
        except ollama.ResponseError as error:
            raise status_error(error.status_code, error.error, self._where) from error
        except (httpx.HTTPError, ConnectionError) as error:
            raise transport_error(error, self._where) from error
        except (json.JSONDecodeError, pydantic.ValidationError) as error:
            # The official client validates the body itself (e.g. tool-call arguments must be an
            # object), so a malformed body surfaces here, not as a raw string we could keep.
            raise undecodable(self._where, None, error) from error

    def _streamed(self, request: dict[str, Any], started: float) -> ModelReply:
        """The reply streamed a token a part; one that runs away (agent/clients/runaway.py) is
        stopped by closing its connection, which ends Ollama's generation. Its counts come with
        the last part, so a stopped reply has the parts it sent as its tokens out, and no
        timings."""
        text = StreamedText(json_reply=request["format"] is not None)
        parts, sent, final = self._client.chat(**request, stream=True), 0, None
        try:
            for part in parts:
                sent += 1
                if text.add(part.message.content or ""):
                    break
                if part.done:
                    final = part
                    break
            else:
                raise undecodable(self._where, text.text, ValueError("the stream ended early"))
        finally:
            parts.close()
        content, runaway = text.kept()
        duration_ms = (time.perf_counter() - started) * 1000
        if final is None:
            return ModelReply(content=content, tokens_out=sent, duration_ms=duration_ms,
                              model=self.name, runaway=runaway)
        return self._reply(final, duration_ms).model_copy(update={"content": content})

    def _reply(self, response: ollama.ChatResponse, duration_ms: float) -> ModelReply:
        calls = [
            ToolCall(
                id=f"call_{i}",  # Ollama does not number its calls; the loop needs an id
                name=c.function.name,
                arguments=dict(c.function.arguments),
            )
            for i, c in enumerate(response.message.tool_calls or [])
        ]
        return ModelReply(
            content=response.message.content or "",
            tool_calls=calls,
            tokens_in=response.prompt_eval_count or 0,
            tokens_out=response.eval_count or 0,
            duration_ms=duration_ms,
            model=response.model or self.name,
            timings=self._watch.mark(ollama_timings(response), response.eval_count or 0),
        )


def context_size(messages: list[Message], context_tokens: int | None,
                 max_tokens: int | None) -> int:
    """num_ctx for this call: the conversation's budget (or, when its prompt is already longer,
    the prompt as estimated) plus the reply, rounded up to CONTEXT_STEP."""
    prompt = sum(len(m.content) + len(json.dumps([c.arguments for c in m.tool_calls]))
                 for m in messages) // CHARS_PER_TOKEN + TEMPLATE_TOKENS * len(messages)
    needed = max(context_tokens or 0, prompt) + (max_tokens or 0)
    return -(-needed // CONTEXT_STEP) * CONTEXT_STEP


def _ollama_message(m: Message) -> dict[str, Any]:
    item: dict[str, Any] = {"role": m.role, "content": m.content}
    if m.tool_calls:
        item["tool_calls"] = [
            {"function": {"name": c.name, "arguments": _as_object(c.arguments)}}
            for c in m.tool_calls
        ]
    if m.role == "tool" and m.name:
        item["tool_name"] = m.name
    return item


def _as_object(arguments: dict[str, Any] | str) -> dict[str, Any]:
    # Ollama only accepts objects here; a malformed call is replayed as its raw text so the model
    # still sees what it wrote.
    return arguments if isinstance(arguments, dict) else {"raw": arguments}
