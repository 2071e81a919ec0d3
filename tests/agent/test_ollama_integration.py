"""Issue 2's done-when: the seed harness, through agent.clients' Ollama client, against a real HTTP
server on loopback speaking /api/chat: native tool calls, malformed calls, and an HTTP 500."""
from __future__ import annotations

import pytest

from evoharness.agent.clients import make_model
from evoharness.agent.events import ListSink
from evoharness.agent.loop import run_agent
from tests.fixtures.host_env import HostEnvironment
from tests.fixtures.ollama_server import OllamaScriptServer


def call(name, arguments):
    return {"tool_calls": [{"name": name, "arguments": arguments}]}


@pytest.fixture
def run_native(harness, monkeypatch):
    harness.settings(action_format="native")

    def run(script):
        with OllamaScriptServer(script, model="qwen-test") as server:
            monkeypatch.setenv("OLLAMA_HOST", server.url)
            sink = ListSink()
            result = run_agent(harness.load(), make_model("ollama:qwen-test"),
                               HostEnvironment(harness.root, harness.app), "Create done.txt", sink)
        return result, sink, server.requests

    return run


def test_native_tool_calls_complete_the_task(run_native, harness):
    result, sink, requests = run_native([
        call("shell", {"command": "echo ok > done.txt"}),
        call("done", {"summary": "created done.txt"}),
    ])
    assert (result.exit_reason, result.final) == ("done", "created done.txt")
    assert (harness.app / "done.txt").read_text() == "ok\n"
    first = requests[0]
    assert first["model"] == "qwen-test" and first["messages"][0]["role"] == "system"
    assert [t["function"]["name"] for t in first["tools"]] == ["shell", "done"]
    answer = requests[1]["messages"][-1]
    assert answer["role"] == "tool" and "[exit code: 0]" in answer["content"]
    model_calls = [e for e in sink.events if e.kind == "model_call"]
    assert model_calls[0].data["tool_calls"][0]["name"] == "shell"
    assert model_calls[0].tokens_in > 0 and result.tokens_in == sum(e.tokens_in for e in model_calls)


def test_malformed_tool_calls_get_structured_errors_then_the_model_recovers(run_native, harness):
    result, sink, requests = run_native([
        call("shell", {"cmd": "echo ok > done.txt"}),           # wrong argument name
        call("shell", {"command": {"type": "string"}}),          # schema echoed back
        call("shell", {"command": "echo ok > done.txt"}),
        call("done", {"summary": "fixed"}),
    ])
    assert (result.exit_reason, result.steps) == ("done", 3)
    assert (harness.app / "done.txt").exists()
    schema_error = requests[1]["messages"][-1]["content"]
    assert "ERROR (permanent)" in schema_error and "'command' is a required property" in schema_error
    assert "JSON schema echoed back" in requests[2]["messages"][-1]["content"]
    assert [e.name for e in sink.events if e.kind == "note"] == ["parse_retry"]


def test_garbage_arguments_from_the_server_are_retried_then_recover(run_native, harness):
    result, _, requests = run_native([
        call("shell", "{command: echo"),  # not JSON: the client cannot decode the reply
        call("shell", {"command": "echo ok > done.txt"}),
        call("done", {"summary": "ok"}),
    ])
    assert result.exit_reason == "done" and (harness.app / "done.txt").exists()
    assert len(requests) == 3


def test_http_500_is_transient_and_retried_with_backoff(run_native, harness):
    result, sink, requests = run_native([
        {"status": 500, "error": "overloaded"},
        call("shell", {"command": "echo ok > done.txt"}),
        call("done", {"summary": "ok"}),
    ])
    assert result.exit_reason == "done" and len(requests) == 3
    assert requests[0]["messages"] == requests[1]["messages"]  # the same request, retried
    assert not [e for e in sink.events if e.kind == "error"]


def test_a_server_that_keeps_failing_ends_the_rollout_as_model_error(run_native):
    result, sink, requests = run_native([{"status": 500}] * 3)
    assert result.exit_reason == "model_error" and len(requests) == 3
    assert sink.events[-1].kind == "error" and sink.events[-1].data["kind"] == "transient"
