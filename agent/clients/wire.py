"""What the HTTP-speaking clients share: the OpenAI chat wire format (tools, messages, replies) and
the mapping of transport failures to ModelError kinds. Each client owns its own endpoint."""
from __future__ import annotations

import json
from typing import Any

import httpx

from evoharness.agent.clients.timings import llama_timings
from evoharness.agent.model import Message, ModelError, ModelReply, ToolCall
from evoharness.workspace.spec import ToolSpec


def tool_payload(tools: list[ToolSpec] | None) -> list[dict[str, Any]] | None:
    """Tools in the function-calling shape both Ollama and OpenAI servers accept."""
    if not tools:
        return None
    return [
        {
            "type": "function",
            "function": {"name": t.name, "description": t.description, "parameters": t.parameters},
        }
        for t in tools
    ]


def response_format(json_mode: bool, schema: dict[str, Any] | None) -> dict[str, Any] | None:
    """The OpenAI `response_format` (also llama.cpp's): a JSON schema the server decodes under,
    else any JSON object, else None (free text)."""
    if schema is not None:
        return {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    return {"type": "json_object"} if json_mode else None


def parse_arguments(raw: Any) -> dict[str, Any] | str:
    """A dict when the arguments are (or decode to) a JSON object; the raw text otherwise, so the
    loop can hand the model a structured error instead of guessing."""
    if isinstance(raw, dict):
        return raw
    text = raw if isinstance(raw, str) else json.dumps(raw)
    try:
        decoded = json.loads(text)
    except json.JSONDecodeError:
        return text
    return decoded if isinstance(decoded, dict) else text


def openai_messages(messages: list[Message]) -> list[dict[str, Any]]:
    out: list[dict[str, Any]] = []
    for m in messages:
        item: dict[str, Any] = {"role": m.role, "content": m.content}
        if m.tool_calls:
            item["tool_calls"] = [
                {
                    "id": c.id,
                    "type": "function",
                    "function": {"name": c.name, "arguments": _as_text(c.arguments)},
                }
                for c in m.tool_calls
            ]
        if m.tool_call_id:
            item["tool_call_id"] = m.tool_call_id
        if m.name:
            item["name"] = m.name
        out.append(item)
    return out


def _as_text(arguments: dict[str, Any] | str) -> str:
    return arguments if isinstance(arguments, str) else json.dumps(arguments)


def openai_reply(payload: Any, *, model: str, duration_ms: float, where: str) -> ModelReply:
    """Parse a chat.completion object; a body of the wrong shape is a transient error (a proxy
    or a half-started server), never a half-read reply."""
    try:
        message = payload["choices"][0]["message"]
        usage = payload.get("usage") or {}
        calls = [
            ToolCall(
                id=c.get("id") or f"call_{i}",
                name=c["function"]["name"],
                arguments=parse_arguments(c["function"].get("arguments", {})),
            )
            for i, c in enumerate(message.get("tool_calls") or [])
        ]
        return ModelReply(
            content=message.get("content") or "",
            tool_calls=calls,
            tokens_in=int(usage.get("prompt_tokens", 0)),
            tokens_out=int(usage.get("completion_tokens", 0)),
            duration_ms=duration_ms,
            model=model,
            timings=llama_timings(payload),
        )
    except (KeyError, IndexError, TypeError, AttributeError, ValueError) as error:
        raise undecodable(where, payload, error) from error


def undecodable(where: str, body: Any, error: Exception) -> ModelError:
    return ModelError(
        f"the model server sent a response that could not be decoded ({error})",
        kind="transient",
        field=where,
        value=body if isinstance(body, str) else repr(body),
    )


def transport_error(error: httpx.HTTPError | ConnectionError, where: str) -> ModelError:
    """Unreachable server → unavailable; timeouts and broken connections → transient."""
    if isinstance(error, (ConnectionError, httpx.ConnectError, httpx.ConnectTimeout)):
        return ModelError(
            f"cannot reach the model server ({error})",
            kind="unavailable",
            field=where,
            hint="Check that the server is running and the host/URL is right",
        )
    if isinstance(error, httpx.TimeoutException):
        return ModelError(f"the model server timed out ({error!r})", kind="transient", field=where)
    return ModelError(f"the connection to the model server failed ({error!r})", kind="transient",
                      field=where)


def status_error(status: int, body: str, where: str) -> ModelError:
    """5xx → transient (the server may recover); 4xx → permanent (the request is wrong)."""
    kind = "transient" if status >= 500 or status < 0 else "permanent"
    return ModelError(f"the model server answered HTTP {status}", kind=kind, field=where,
                      value=body[:500])
