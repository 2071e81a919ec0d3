"""agent/delegate.py: skills loaded on demand, sub-agents run through the loop with their own tools."""
from __future__ import annotations

import yaml

from tests.agent.conftest import last_text
from evoharness.agent.clients.scripted import json_action

SKILL = """---
name: csv-tips
description: How to handle CSV files safely
---
Use python's csv module; never split on commas by hand.
"""


def test_skill_body_is_loaded_only_on_demand(harness):
    harness.add("skills", "csv-tips", "skills/csv-tips/SKILL.md", SKILL)
    result, _, model = harness.run([json_action("load_skill", name="csv-tips"),
                                    json_action("done", summary="ok")])
    assert result.exit_reason == "done"
    system = model.calls[0][0].content
    assert "How to handle CSV files safely" in system and "csv module" not in system
    assert "never split on commas by hand" in last_text(model)


def test_unknown_skill_is_a_schema_error(harness):
    harness.add("skills", "csv-tips", "skills/csv-tips/SKILL.md", SKILL)
    _, _, model = harness.run([json_action("load_skill", name="nope"), json_action("done", summary="x")])
    assert "ERROR (permanent)" in last_text(model) and "'nope' is not one of" in last_text(model)


def add_helper(harness, max_steps=3):
    agent = {"name": "writer", "description": "writes files", "tools": ["shell"],
             "system_prompt": "You write files exactly as asked.", "max_steps": max_steps}
    harness.add("subagents", "writer", "subagents/writer/agent.yaml", yaml.safe_dump(agent))


def test_delegation_runs_a_sub_agent_and_returns_its_summary(harness):
    add_helper(harness)
    result, sink, model = harness.run([
        json_action("delegate", agent="writer", task="create out.txt containing 42"),
        json_action("shell", command="echo 42 > out.txt"),  # the sub-agent's turns
        json_action("done", summary="out.txt written"),
        json_action("done", summary="delegated"),
    ])
    assert (result.exit_reason, result.steps, result.final) == ("done", 2, "delegated")
    assert (harness.app / "out.txt").read_text() == "42\n"
    sub_system, sub_task = model.calls[1][:2]
    assert sub_system.content.startswith("You write files exactly as asked.")
    assert "`shell`" in sub_system.content and "`delegate`" not in sub_system.content
    assert sub_task.content == "create out.txt containing 42"
    assert last_text(model) == "Result of delegate:\nout.txt written"
    tagged = [e.data.get("subagent") for e in sink.events]
    # main model_call + tool_call, the sub-agent's two steps, then the main tool_result and done step
    assert tagged == [None] * 2 + ["writer"] * 6 + [None] * 4
    assert [e.seq for e in sink.events] == list(range(len(sink.events)))
    assert result.tokens_in == 40  # the sub-agent's tokens count against the rollout


def test_a_sub_agent_out_of_steps_reports_a_transient_error(harness):
    add_helper(harness, max_steps=1)
    result, _, model = harness.run([
        json_action("delegate", agent="writer", task="loop"),
        json_action("shell", command="true"),
        json_action("done", summary="gave up"),
    ])
    assert result.exit_reason == "done"
    assert "ERROR (transient): sub-agent writer stopped without finishing (max_steps)" in last_text(model)


def test_sub_agent_cannot_use_tools_outside_its_subset(harness):
    add_helper(harness)
    harness.add("skills", "csv-tips", "skills/csv-tips/SKILL.md", SKILL)
    _, _, model = harness.run([
        json_action("delegate", agent="writer", task="t"),
        json_action("load_skill", name="csv-tips"),
        json_action("done", summary="sub done"),
        json_action("done", summary="main done"),
    ])
    assert "unknown tool 'load_skill'" in model.calls[2][-1].content
