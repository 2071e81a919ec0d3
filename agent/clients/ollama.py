"""The Ollama client: the Model protocol over the official `ollama` package (native tool calls,
JSON format, token counts from the server). Retries are retry.py's job."""
from __future__ import annotations

import json
import os
import time
from typing import Any

import httpx
import ollama
import pydantic

from agent.clients.boundary import text_boundary
from agent.clients.wire import status_error, tool_payload, transport_error, undecodable
from agent.model import Message, ModelReply, ToolCall
from workspace.spec import ToolSpec

DEFAULT_HOST = "http://127.0.0.1:11434"


class OllamaModel:
    """One model on one Ollama server; `host` defaults to OLLAMA_HOST, then Ollama's default."""

    constrains_by_default = True  # `format` takes a JSON schema (Ollama >= 0.5, llama.cpp grammars)

    def __init__(self, name: str, host: str | None = None, timeout: float = 300.0) -> None:
        self.name = name
        self.host = host or os.environ.get("OLLAMA_HOST") or DEFAULT_HOST
        self._where = f"{self.host}/api/chat"
        self._client = ollama.Client(host=self.host, timeout=timeout)

    @text_boundary
    def chat(
        self,
        messages: list[Message],
        *,
        tools: list[ToolSpec] | None = None,
        temperature: float = 0.0,
        json_mode: bool = False,
        max_tokens: int | None = None,
        schema: dict[str, Any] | None = None,
    ) -> ModelReply:
        options: dict[str, Any] = {"temperature": temperature}
        if max_tokens is not None:
            options["num_predict"] = max_tokens
        started = time.perf_counter()
        try:
            response = self._client.chat(
                model=self.name,
                messages=[_ollama_message(m) for m in messages],
                tools=tool_payload(tools),
                format=schema if schema is not None else "json" if json_mode else None,
                options=options,
                stream=False,
            )
        except ollama.ResponseError as error:
            raise status_error(error.status_code, error.error, self._where) from error
        except (httpx.HTTPError, ConnectionError) as error:
            raise transport_error(error, self._where) from error
        except (json.JSONDecodeError, pydantic.ValidationError) as error:
            # The official client validates the body itself (e.g. tool-call arguments must be an
            # object), so a malformed body surfaces here, not as a raw string we could keep.
            raise undecodable(self._where, None, error) from error
        return self._reply(response, (time.perf_counter() - started) * 1000)

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
        )


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
