"""The scripted model (agent/clients/scripted.py) chosen by spec like any model: built-in policies
and script files, replies chosen by the conversation alone, and clear errors for bad scripts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from agent.clients import make_model, parse_spec
from agent.model import Message, ModelError
from evoharness.errors import EvoError, ValidationFailed
from workspace.spec import ToolSpec

SHELL = ToolSpec(name="shell", description="run", parameters={"type": "object"})


def conversation(system: str, instruction: str, replies: int = 0) -> list[Message]:
    messages = [Message(role="system", content=system), Message(role="user", content=instruction)]
    for n in range(replies):
        messages += [Message(role="assistant", content=f"reply {n}"),
                     Message(role="user", content="result")]
    return messages


def action(reply) -> tuple[str, dict]:
    data = json.loads(reply.content)
    return data["tool"], data["arguments"]


def test_the_run_line_policy_runs_the_instructions_command_then_is_done() -> None:
    model = make_model("scripted:run-line")
    task = "Make the file.\nRUN: echo hi > /app/x.txt\n"
    assert action(model.chat(conversation("sys", task))) == ("shell", {"command": "echo hi > /app/x.txt"})
    assert action(model.chat(conversation("sys", task, replies=1)))[0] == "done"
    assert action(model.chat(conversation("sys", "no command here")))[0] == "done"


def test_a_script_file_answers_by_system_prompt_and_turn(tmp_path: Path) -> None:
    script = tmp_path / "agents.yaml"
    script.write_text(yaml.safe_dump({"rules": [
        {"when": {"system_has": ["EVOLVER"], "system_lacks": ["quiet"]},
         "replies": [{"tool": "read", "arguments": {"path": "a"}}, {"text": "plain words"}]},
        {"when": {"instruction_has": ["boom"]}, "replies": [{"error": "unavailable"}]},
    ]}))
    model = make_model(f"scripted:{script}")
    assert model.name == "scripted:agents"
    assert action(model.chat(conversation("EVOLVER here", "x"))) == ("read", {"path": "a"})
    assert model.chat(conversation("EVOLVER here", "x", replies=1)).content == "plain words"
    assert action(model.chat(conversation("EVOLVER here", "x", replies=2)))[0] == "done"
    assert action(model.chat(conversation("EVOLVER, quiet", "x")))[0] == "done"  # no rule holds
    with pytest.raises(ModelError) as caught:
        model.chat(conversation("other", "boom"))
    assert caught.value.kind == "unavailable"
    native = model.chat(conversation("EVOLVER", "x"), tools=[SHELL])
    assert native.content == "" and [(c.name, c.arguments) for c in native.tool_calls] == [
        ("read", {"path": "a"})]
    assert native.tokens_in > 0 and native.tokens_out > 0  # counted like a server would


def test_a_bad_script_names_the_file_and_field(tmp_path: Path) -> None:
    script = tmp_path / "bad.yaml"
    script.write_text(yaml.safe_dump({"rules": [{"replies": [{"tool": "x", "text": "y"}]}]}))
    with pytest.raises(ValidationFailed) as caught:
        make_model(f"scripted:{script}")
    assert "bad.yaml" in str(caught.value) and "rules.0.replies.0" in str(caught.value)
    assert "exactly one of tool, run_line, text, error" in str(caught.value)


def test_a_missing_script_is_refused_when_the_config_is_checked(tmp_path: Path) -> None:
    with pytest.raises(EvoError, match="no model script here") as caught:
        parse_spec(f"scripted:{tmp_path / 'nothing.yaml'}")
    assert "done" in str(caught.value) and "run-line" in str(caught.value)  # the built-ins
    assert parse_spec("scripted:done") == ("scripted", "done", "")
