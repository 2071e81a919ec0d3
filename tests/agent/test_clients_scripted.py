"""The scripted model (agent/clients/scripted.py) chosen by spec like any model: built-in policies
and script files, replies chosen by the conversation alone, and clear errors for bad scripts."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from evoharness.agent.clients import make_model, parse_spec
from evoharness.agent.model import Message, ModelError
from evoharness.errors import EvoError, ValidationFailed
from evoharness.workspace.spec import ToolSpec

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
    assert "exactly one of tool, run_line, text, quote, error" in str(caught.value)


def test_a_missing_script_is_refused_when_the_config_is_checked(tmp_path: Path) -> None:
    with pytest.raises(EvoError, match="no model script here") as caught:
        parse_spec(f"scripted:{tmp_path / 'nothing.yaml'}")
    assert "done" in str(caught.value) and "run-line" in str(caught.value)  # the built-ins
    assert parse_spec("scripted:done") == ("scripted", "done", "")


def test_a_rule_with_a_probability_answers_that_share_of_rollouts_the_same_each_time(
        tmp_path: Path) -> None:
    """A known pass probability per harness: the coin is drawn once per rollout (by its key) and
    rule, so a rollout run again answers the same, and across rollouts the share is p."""
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"seed": "s1", "rules": [
        {"when": {"system_has": ["HELP"]}, "probability": 0.8, "replies": [{"run_line": True}]},
        {"probability": 0.2, "replies": [{"run_line": True}]}]}))
    model = make_model(f"scripted:{path}")
    task = "RUN: echo hi > /app/x.txt"

    def runs_line(system: str, key: str) -> bool:
        return action(model.for_rollout(key).chat(conversation(system, task)))[0] == "shell"

    keys = [f"run/it000-t-a{n:02d}" for n in range(2000)]
    helped = [runs_line("HELP", key) for key in keys]
    plain = [runs_line("sys", key) for key in keys]
    # A HELP rollout that misses its 0.8 coin falls through to the 0.2 rule (its own coin):
    # 0.8 + 0.2 * 0.2 = 0.84. 2000 draws: one standard deviation is under 0.009; 0.04 is 4.5.
    assert abs(sum(helped) / len(keys) - 0.84) < 0.04 and abs(sum(plain) / len(keys) - 0.2) < 0.04
    assert [runs_line("HELP", key) for key in keys[:50]] == helped[:50]  # the same rollout again
    reseeded = tmp_path / "q.yaml"
    reseeded.write_text(path.read_text().replace("seed: s1", "seed: s2"))
    other = make_model(f"scripted:{reseeded}")
    moved = [action(other.for_rollout(k).chat(conversation("sys", task)))[0] == "shell"
             for k in keys]
    assert moved != plain  # the seed changes the draws


def test_turns_of_one_rollout_share_its_coin(tmp_path: Path) -> None:
    path = tmp_path / "p.yaml"
    path.write_text(yaml.safe_dump({"rules": [
        {"probability": 0.5, "replies": [{"run_line": True}, {"text": "second"}]}]}))
    model = make_model(f"scripted:{path}")
    for key in (f"r/{n}" for n in range(40)):
        bound = model.for_rollout(key)
        first = bound.chat(conversation("sys", "RUN: true"))
        second = bound.chat(conversation("sys", "RUN: true", replies=1))
        # either the rule answers both turns or neither (then the script's `done` ends it)
        assert (first.content.startswith('{"thought": "scripted", "tool": "shell"')
                == (second.content == "second"))


def test_a_quote_reply_answers_with_what_the_last_message_holds(tmp_path: Path) -> None:
    """How a test plays a picker that reads: the reply is the pattern's first group in the
    conversation's last message (dot matching newlines), "" when it does not match."""
    path = tmp_path / "q.yaml"
    path.write_text(yaml.safe_dump({"rules": [{"replies": [
        {"quote": r'"attempt": (\d+),[^{}]*"ok": true'}]}]}))
    model = make_model(f"scripted:{path}")
    asked = '[{"attempt": 1,\n "ok": false}, {"attempt": 2,\n "ok": true}]'
    assert model.chat(conversation("sys", asked)).content == "2"
    assert model.chat(conversation("sys", asked.replace("true", "false"))).content == ""


def test_a_rule_can_hold_for_some_rollouts_only(tmp_path: Path) -> None:
    path = tmp_path / "r.yaml"
    path.write_text(yaml.safe_dump({"rules": [
        {"when": {"rollout_matches": r"-a0[13]$"}, "replies": [{"text": "odd"}]},
        {"replies": [{"text": "even"}]}]}))
    model = make_model(f"scripted:{path}")
    said = [model.for_rollout(f"run/it000-t-a{n:02d}").chat(conversation("s", "i")).content
            for n in range(4)]
    assert said == ["even", "odd", "even", "odd"]
    bad = tmp_path / "bad.yaml"
    bad.write_text(yaml.safe_dump({"rules": [{"when": {"rollout_matches": "("}}]}))
    with pytest.raises(ValidationFailed) as caught:
        parse_spec(f"scripted:{bad}") and make_model(f"scripted:{bad}")
    assert "rollout_matches is not a regular expression" in str(caught.value)
