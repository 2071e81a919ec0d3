"""OllamaModel against a real HTTP server on loopback that speaks Ollama's /api/chat."""
from __future__ import annotations

import socket

import httpx
import pytest

from evoharness.agent.clients import OllamaModel, RetryingModel
from evoharness.agent.events import CallTimings
from evoharness.agent.model import Message, ModelError, ToolCall
from evoharness.agent.parsing import action_schema
from tests.fixtures.ollama_server import OllamaScriptServer
from evoharness.workspace.spec import ToolSpec

SHELL = ToolSpec(
    name="shell",
    description="Run a shell command",
    parameters={"type": "object", "properties": {"command": {"type": "string"}},
                "required": ["command"]},
)
HELLO = [Message(role="system", content="be brief"), Message(role="user", content="hello")]


def test_reply_content_and_server_token_counts() -> None:
    script = [{"content": "hi there", "prompt_eval_count": 17, "eval_count": 4}]
    with OllamaScriptServer(script) as s:
        reply = OllamaModel("qwen", host=s.url).chat(HELLO, temperature=0.3, max_tokens=50)
    assert reply.content == "hi there"
    assert (reply.tokens_in, reply.tokens_out) == (17, 4)
    sent = s.requests[0]
    assert sent["model"] == "qwen" and sent["stream"] is True  # a text reply is streamed
    assert sent["options"] == {"temperature": 0.3, "num_predict": 50, "num_ctx": 1024}
    assert [m["role"] for m in sent["messages"]] == ["system", "user"]
    assert not sent.get("format") and not sent.get("tools")
    assert reply.timings == CallTimings(tokens_read=17)  # Ollama names no cached tokens


def test_a_sampling_seed_goes_in_the_options() -> None:
    with OllamaScriptServer([{"content": "a"}, {"content": "b"}]) as s:
        client = OllamaModel("qwen", host=s.url)
        client.chat(HELLO, seed=1234)
        RetryingModel(client).chat(HELLO, seed=99)  # the retrying wrapper passes it on
    assert [r["options"].get("seed") for r in s.requests] == [1234, 99]


def test_the_server_s_times_become_the_call_s_timings() -> None:
    script = [{"content": "ok", "prompt_eval_count": 300, "eval_count": 20,
               "prompt_eval_duration": 1_500_000_000, "eval_duration": 4_000_000_000}]
    with OllamaScriptServer(script) as s:
        reply = OllamaModel("qwen", host=s.url).chat(HELLO)
    assert reply.timings == CallTimings(tokens_read=300, prefill_ms=1500.0, decode_ms=4000.0)


def _long_conversation(turns: int) -> list[Message]:
    """A system prompt, then `turns` exchanges of ~400 tokens each (at 4 characters a token)."""
    messages = [Message(role="system", content="RULES: " + "be careful. " * 100)]
    for turn in range(turns):
        messages += [Message(role="user", content=f"output {turn}: " + "x" * 1600),
                     Message(role="assistant", content='{"tool": "shell"}')]
    return messages + [Message(role="user", content="what next?")]


def test_the_context_holds_the_budget_and_the_reply_so_nothing_is_cut() -> None:
    """A stock Ollama answers in 2,048 tokens and cuts a longer prompt from the front, system
    prompt first. The client sizes num_ctx from the conversation's budget plus the reply (a step
    of 1,024, the same for every call of the conversation), or from the prompt where it is
    longer still."""
    conversation = _long_conversation(8)  # ~3,500 tokens: past Ollama's default context
    with OllamaScriptServer([{"content": "a"}] * 3) as s:
        client = OllamaModel("qwen", host=s.url)
        client.chat(conversation, max_tokens=512, context_tokens=6000)
        client.chat(conversation[:3], max_tokens=512, context_tokens=6000)
        client.chat(_long_conversation(20), max_tokens=512, context_tokens=6000)
        sizes = [request["options"]["num_ctx"] for request in s.requests]
        assert sizes == [7168, 7168, 13312]  # 6,000 + 512; 20 turns: ~33,000 chars / 3 + 512
        assert s.cut == [0, 0, 0]
        assert s.requests[0]["messages"][0]["content"].startswith("RULES")
        # The control: the same prompt without a context size loses its system prompt.
        httpx.post(f"{s.url}/api/chat", json={"model": "qwen", "stream": False, "messages": [
            _message(m) for m in conversation]})
        assert s.cut[-1] > 0 and not s.requests[-1]["messages"][0]["content"].startswith("RULES")


def _message(m: Message) -> dict:
    return {"role": m.role, "content": m.content}


def test_native_tool_call_and_tools_sent() -> None:
    script = [{"tool_calls": [{"name": "shell", "arguments": {"command": "ls -la"}}]}]
    with OllamaScriptServer(script) as s:
        reply = OllamaModel("qwen", host=s.url).chat(HELLO, tools=[SHELL])
    expected = ToolCall(id="call_0", name="shell", arguments={"command": "ls -la"})
    assert reply.tool_calls == [expected]
    assert s.requests[0]["tools"] == [{"type": "function", "function": SHELL.model_dump()}]
    assert s.requests[0]["stream"] is False  # native tool calls come whole


def test_schema_violating_arguments_are_kept_as_sent() -> None:
    script = [{"tool_calls": [{"name": "shell", "arguments": {"cmd": 5}}]}]
    with OllamaScriptServer(script) as s:
        reply = OllamaModel("qwen", host=s.url).chat(HELLO, tools=[SHELL])
    assert reply.tool_calls[0].arguments == {"cmd": 5}


def test_string_arguments_are_undecodable_for_the_official_client() -> None:
    script = [{"tool_calls": [{"name": "shell", "arguments": "{not json"}]}]
    with OllamaScriptServer(script) as s, pytest.raises(ModelError) as raised:
        OllamaModel("qwen", host=s.url).chat(HELLO, tools=[SHELL])
    assert raised.value.kind == "transient"
    assert "decoded" in str(raised.value)


def test_json_mode_sets_format() -> None:
    with OllamaScriptServer([{"content": '{"tool": "done"}'}]) as s:
        OllamaModel("qwen", host=s.url).chat(HELLO, json_mode=True)
    assert s.requests[0]["format"] == "json"


def test_a_schema_is_sent_as_the_format() -> None:
    schema = action_schema([SHELL])
    with OllamaScriptServer([{"content": '{"tool": "shell"}'}]) as s:
        OllamaModel("qwen", host=s.url).chat(HELLO, json_mode=True, schema=schema)
    assert s.requests[0]["format"] == schema  # through the official client, unchanged


def test_history_with_tool_calls_is_sent_in_ollama_shape() -> None:
    history = HELLO + [
        Message(role="assistant", tool_calls=[ToolCall(id="c1", name="shell", arguments="oops")]),
        Message(role="tool", content="error: bad arguments", tool_call_id="c1", name="shell"),
    ]
    with OllamaScriptServer([{"content": "ok"}]) as s:
        OllamaModel("qwen", host=s.url).chat(history)
    assistant, tool = s.requests[0]["messages"][2:]
    assert assistant["tool_calls"][0]["function"]["arguments"] == {"raw": "oops"}
    assert tool["tool_name"] == "shell"


def test_http_500_is_retried_then_succeeds() -> None:
    sleeps: list[float] = []
    with OllamaScriptServer([{"status": 500}, {"content": "recovered"}]) as s:
        model = RetryingModel(OllamaModel("qwen", host=s.url), backoff=0.5, sleep=sleeps.append)
        reply = model.chat(HELLO)
    assert reply.content == "recovered"
    assert len(s.requests) == 2
    assert sleeps == [0.5]


def test_http_404_is_permanent_and_not_retried() -> None:
    with OllamaScriptServer([{"status": 404, "error": "model 'x' not found"}]) as s:
        model = RetryingModel(OllamaModel("x", host=s.url), sleep=lambda _: None)
        with pytest.raises(ModelError) as raised:
            model.chat(HELLO)
    assert raised.value.kind == "permanent"
    assert "not found" in str(raised.value)
    assert len(s.requests) == 1


def test_connection_refused_is_unavailable() -> None:
    with socket.socket() as sock:  # a port that was free a moment ago and has no listener
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    with pytest.raises(ModelError) as raised:
        OllamaModel("qwen", host=f"http://127.0.0.1:{port}").chat(HELLO)
    assert raised.value.kind == "unavailable"
    assert raised.value.field == f"http://127.0.0.1:{port}/api/chat"


def test_hang_is_a_transient_timeout() -> None:
    with OllamaScriptServer([{"hang": 5}]) as s, pytest.raises(ModelError) as raised:
        OllamaModel("qwen", host=s.url, timeout=0.2).chat(HELLO)
    assert raised.value.kind == "transient"
    assert "timed out" in str(raised.value)


def test_non_json_body_is_transient() -> None:
    script = [{"raw": "<html>proxy error</html>"}]
    with OllamaScriptServer(script) as s, pytest.raises(ModelError) as raised:
        OllamaModel("qwen", host=s.url).chat(HELLO)
    assert raised.value.kind == "transient"


def test_host_comes_from_environment(monkeypatch: pytest.MonkeyPatch) -> None:
    with OllamaScriptServer([{"content": "via env"}]) as s:
        monkeypatch.setenv("OLLAMA_HOST", s.url)
        assert OllamaModel("qwen").chat(HELLO).content == "via env"
