"""The OpenAI-compatible client (llama.cpp server, vLLM, LM Studio): the Model protocol over one
httpx POST to {base}/v1/chat/completions, a text reply streamed so that one that runs away is
stopped. Wire-format parsing is wire.py's, retries retry.py's."""
from __future__ import annotations

import json
import time
from typing import Any

import httpx

from evoharness.agent.clients.boundary import text_boundary
from evoharness.agent.clients.runaway import StreamedText
from evoharness.agent.clients.speed import stall_watch
from evoharness.agent.clients.wire import (
    openai_messages,
    openai_reply,
    response_format,
    status_error,
    tool_payload,
    transport_error,
    undecodable,
)
from evoharness.agent.model import Message, ModelClient, ModelReply, ModelRequest, Runaway


class OpenAICompatModel(ModelClient):
    """`base_url` is the server root (with or without a trailing /v1); `model` the served name."""

    constrains_by_default = False  # whether a server accepts json_schema varies: the harness says "on"

    def __init__(
        self, base_url: str, model: str, api_key: str | None = None, timeout: float = 300.0
    ) -> None:
        self.name = model
        root = base_url.rstrip("/").removesuffix("/v1")
        self._where = f"{root}/v1/chat/completions"
        headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
        self._client = httpx.Client(timeout=timeout, headers=headers)
        self._watch = stall_watch(model)

    @text_boundary
    def respond(self, request: ModelRequest) -> ModelReply:
        # request.context_tokens is not sent: these servers fix their context when they start
        body: dict[str, Any] = {
            "model": self.name,
            "messages": openai_messages(request.messages),
            "temperature": request.temperature,
        }
        if request.tools:
            body["tools"] = tool_payload(request.tools)
        if (reply_format := response_format(request.json_mode, request.schema)) is not None:
            body["response_format"] = reply_format
        if request.max_tokens is not None:
            body["max_tokens"] = request.max_tokens
        if request.seed is not None:
            body["seed"] = request.seed
        started = time.perf_counter()
        try:
            if request.tools:  # native tool calls come whole
                payload, runaway = self._payload(self._client.post(self._where, json=body)), None
            else:
                payload, runaway = self._streamed(body)
        except httpx.HTTPError as error:
            raise transport_error(error, self._where) from error
        duration_ms = (time.perf_counter() - started) * 1000
        reply = openai_reply(payload, model=self.name, duration_ms=duration_ms, where=self._where)
        return reply.model_copy(update={
            "timings": self._watch.mark(reply.timings, reply.tokens_out), "runaway": runaway})

    def _payload(self, response: httpx.Response) -> dict[str, Any]:
        if response.status_code >= 400:
            raise status_error(response.status_code, response.text, self._where)
        try:
            return response.json()
        except json.JSONDecodeError as error:
            raise undecodable(self._where, response.text, error) from error

    def _streamed(self, body: dict[str, Any]) -> tuple[dict[str, Any], Runaway | None]:
        """The reply streamed as server-sent events, as one chat.completion payload; one that runs
        away (agent/clients/runaway.py) is stopped by closing the connection. Usage (and
        llama.cpp's timings) come in the last chunk, so a stopped reply has the chunks it sent
        as its tokens out, and no timings."""
        text = StreamedText(json_reply="response_format" in body)
        request = {**body, "stream": True, "stream_options": {"include_usage": True}}
        last: dict[str, Any] = {}
        chunks = 0
        with self._client.stream("POST", self._where, json=request) as response:
            if response.status_code >= 400 or not response.headers.get(
                    "content-type", "").startswith("text/event-stream"):
                response.read()  # an error, or a server that answers whole
                return self._payload(response), None
            for line in response.iter_lines():
                data = line.removeprefix("data:").strip()
                if not line.startswith("data:") or data == "[DONE]":
                    continue
                try:
                    last = json.loads(data)
                except json.JSONDecodeError as error:
                    raise undecodable(self._where, line, error) from error
                pieces = [(c.get("delta") or {}).get("content") or ""
                          for c in last.get("choices") or []]
                chunks += bool(pieces)
                if text.add("".join(pieces)):
                    break
        content, runaway = text.kept()
        if runaway is not None:  # stopped before the last chunk, which holds the counts
            last = {"usage": {"completion_tokens": chunks}}
        return {**last, "choices": [{"message": {"content": content}}]}, runaway
