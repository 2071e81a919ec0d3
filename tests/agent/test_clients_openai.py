"""OpenAICompatModel against a real loopback server speaking /v1/chat/completions."""
from __future__ import annotations

import json

import pytest

from evoharness.agent.clients import OpenAICompatModel, RetryingModel
from evoharness.agent.events import CallTimings
from evoharness.agent.model import Message, ModelError, ToolCall
from evoharness.agent.parsing import action_schema
from tests.fixtures.ollama_server import OllamaScriptServer
from evoharness.workspace.spec import ToolSpec

SHELL = ToolSpec(name="shell", description="Run a command",
                 parameters={"type": "object", "properties": {"command": {"type": "string"}}})
HELLO = [Message(role="user", content="hello")]


def test_reply_usage_and_request_shape() -> None:
    script = [{"content": "hi", "prompt_eval_count": 12, "eval_count": 3}]
    with OllamaScriptServer(script) as s:
        reply = OpenAICompatModel(s.url + "/v1", "coder").chat(HELLO, json_mode=True, max_tokens=9)
    assert (reply.content, reply.tokens_in, reply.tokens_out) == ("hi", 12, 3)
    sent = s.requests[0]
    assert sent["model"] == "coder"
    assert sent["response_format"] == {"type": "json_object"}
    assert sent["max_tokens"] == 9
    assert "tools" not in sent and "seed" not in sent


def test_a_sampling_seed_is_sent() -> None:
    with OllamaScriptServer([{"content": "a"}]) as s:
        OpenAICompatModel(s.url, "coder").chat(HELLO, seed=42)
    assert s.requests[0]["seed"] == 42


def test_llama_cpp_timings_and_vllm_cached_tokens_become_the_call_s_timings() -> None:
    llama = {"prompt_n": 40, "cache_n": 360, "prompt_ms": 2900.5, "predicted_n": 30,
             "predicted_ms": 6100.0, "predicted_per_second": 4.9}
    script = [{"content": "a", "prompt_eval_count": 400, "eval_count": 30, "timings": llama},
              {"content": "b", "prompt_eval_count": 400, "cached_tokens": 384},
              {"content": "c"}]
    with OllamaScriptServer(script) as s:
        client = OpenAICompatModel(s.url, "coder")
        replies = [client.chat(HELLO) for _ in script]
    assert replies[0].timings == CallTimings(tokens_read=40, tokens_cached=360,
                                             prefill_ms=2900.5, decode_ms=6100.0)
    assert replies[1].timings == CallTimings(tokens_read=16, tokens_cached=384)
    assert replies[2].timings is None  # a plain server says nothing: nothing is made up


def test_tool_calls_decode_json_and_keep_malformed_raw() -> None:
    script = [{"tool_calls": [{"name": "shell", "arguments": {"command": "pwd"}},
                              {"name": "shell", "arguments": '{"command": "ls"'},
                              {"name": "shell", "arguments": "[1, 2]"}]}]
    with OllamaScriptServer(script) as s:
        reply = OpenAICompatModel(s.url, "coder").chat(HELLO, tools=[SHELL])
    arguments = [c.arguments for c in reply.tool_calls]
    assert arguments == [{"command": "pwd"}, '{"command": "ls"', "[1, 2]"]
    assert reply.tool_calls[0].id == "call_0"
    assert s.requests[0]["tools"][0]["function"]["name"] == "shell"


def test_history_tool_calls_are_sent_as_json_strings() -> None:
    history = HELLO + [
        Message(role="assistant",
                tool_calls=[ToolCall(id="c9", name="shell", arguments={"command": "ls"})]),
        Message(role="tool", content="a.txt", tool_call_id="c9", name="shell"),
    ]
    with OllamaScriptServer([{"content": "done"}]) as s:
        OpenAICompatModel(s.url, "coder").chat(history)
    assistant, tool = s.requests[0]["messages"][1:]
    assert json.loads(assistant["tool_calls"][0]["function"]["arguments"]) == {"command": "ls"}
    assert tool["tool_call_id"] == "c9"


def test_api_key_is_sent_as_bearer_token() -> None:
    seen: list[str] = []

    with OllamaScriptServer([{"content": "ok"}]) as s:
        model = OpenAICompatModel(s.url, "coder", api_key="sekret")
        hooks = model._client.event_hooks["request"]
        hooks.append(lambda r: seen.append(r.headers["authorization"]))
        model.chat(HELLO)
    assert seen == ["Bearer sekret"]


def test_500_retried_then_success() -> None:
    with OllamaScriptServer([{"status": 503}, {"status": 500}, {"content": "third time"}]) as s:
        model = RetryingModel(OpenAICompatModel(s.url, "coder"), sleep=lambda _: None)
        assert model.chat(HELLO).content == "third time"
    assert len(s.requests) == 3


@pytest.mark.parametrize(
    ("item", "kind"),
    [({"status": 400}, "permanent"), ({"raw": "not json"}, "transient"),
     ({"raw": '{"choices": []}'}, "transient"), ({"hang": 5}, "transient")],
)
def test_error_kinds(item: dict, kind: str) -> None:
    # Only the hang needs a short client timeout; the others get a generous one, so a stalled
    # loopback server on a loaded machine cannot turn a "permanent" 400 into a "transient" timeout.
    timeout = 0.2 if "hang" in item else 60.0
    with OllamaScriptServer([item]) as s, pytest.raises(ModelError) as raised:
        OpenAICompatModel(s.url, "coder", timeout=timeout).chat(HELLO)
    assert raised.value.kind == kind
    assert raised.value.field == f"{s.url}/v1/chat/completions"


def test_unreachable_server_is_unavailable() -> None:
    with OllamaScriptServer() as s:
        url = s.url
    with pytest.raises(ModelError) as raised:
        OpenAICompatModel(url, "coder").chat(HELLO)
    assert raised.value.kind == "unavailable"


def test_a_schema_is_sent_as_a_json_schema_response_format() -> None:
    schema = action_schema([SHELL])
    with OllamaScriptServer([{"content": '{"tool": "shell"}'}]) as s:
        OpenAICompatModel(s.url, "coder").chat(HELLO, json_mode=True, schema=schema)
    sent = s.requests[0]["response_format"]
    assert sent == {"type": "json_schema", "json_schema": {"name": "reply", "schema": schema}}
    assert OpenAICompatModel.constrains_by_default is False  # servers differ: the harness opts in
