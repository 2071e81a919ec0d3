"""docs/models.md: JSON actions are decoded under the action's JSON schema "by default for the
embedded model and Ollama". The seed harness (constrained_decoding: auto) runs through each real
client as make_model builds it, and what reaches the server is checked: Ollama's `format` on a
loopback Ollama server; the embedded model's llguidance grammar at its server's one entry point
(a stand-in for the native server, so no weights are loaded). An OpenAI-compatible server gets
no schema unless the harness says `on`."""
from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

import evoharness.agent.clients.embedded as embedded
from evoharness.agent.clients import make_model
from evoharness.agent.clients.scripted import json_action
from evoharness.agent.parsing import action_schema
from evoharness.agent.tools import DONE
from tests.fixtures.llama_server import FakeLlamaServer

DONE_REPLY = json_action("done", summary="finished")


def expected_tools(harness) -> list[str]:
    """The tools of the loop's own action schema for the harness."""
    return tools_in(action_schema([*harness.load().tools, DONE]))


def tools_in(schema: dict[str, Any]) -> list[str]:
    return [v["properties"]["tool"]["const"] for v in schema["oneOf"]]


def test_ollama_gets_the_action_schema_by_default(harness, monkeypatch) -> None:
    from tests.fixtures.ollama_server import OllamaScriptServer

    with OllamaScriptServer([{"content": DONE_REPLY}]) as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        result, _, _ = harness.run(make_model("ollama:qwen"))
    assert result.exit_reason == "done"
    sent = server.requests[0]["format"]
    assert isinstance(sent, dict) and tools_in(sent) == expected_tools(harness) == ["shell", "done"]


@pytest.mark.parametrize("spec", ["embedded", "embedded-small"])
def test_the_embedded_model_gets_the_action_schema_by_default(harness, monkeypatch, spec) -> None:
    server = FakeLlamaServer(DONE_REPLY)
    monkeypatch.setattr(embedded, "ensure_weights", lambda weights: Path(f"/fake/{weights.name}"))
    monkeypatch.setattr(embedded, "start_server", lambda path, size: server)
    monkeypatch.setattr(embedded, "_servers", {})  # the stand-in never outlives the test
    result, _, _ = harness.run(make_model(spec))
    assert result.exit_reason == "done"
    # As an llguidance grammar (compact JSON, docs/speed.md): `%json` and the schema itself.
    header, rule = server.bodies[0]["grammar"].split("\n", 1)
    assert header == "%llguidance {}" and rule.startswith("start: %json ")
    schema = json.loads(rule.removeprefix("start: %json "))
    assert tools_in(schema) == expected_tools(harness)
    assert schema["x-guidance"]["whitespace_flexible"] is False


def test_an_openai_compatible_server_gets_a_schema_only_when_asked(harness, monkeypatch) -> None:
    from tests.fixtures.ollama_server import OllamaScriptServer

    for setting, sent in (("auto", False), ("on", True)):
        with OllamaScriptServer([{"content": DONE_REPLY}]) as server:
            harness.settings(constrained_decoding=setting).run(
                make_model(f"openai:{server.url}/v1#qwen"))
        body = server.requests[0]
        assert ("response_format" in body and "json_schema" in str(body["response_format"])) \
            == sent, (setting, body.get("response_format"))
