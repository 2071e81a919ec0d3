"""The built-in tools that reach a harness's skills and sub-agents: load_skill returns a SKILL.md body
on demand; delegate runs a sub-agent (through a runner the loop provides) and returns its summary."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any, Protocol

from evoharness.agent.exits import ExitReason
from evoharness.agent.parsing import format_instructions
from evoharness.agent.tools import Handler, ToolResult, refused
from evoharness.workspace.spec import Settings, SkillDoc, SubagentSpec, ToolSpec


class SubagentOutcome(Protocol):
    exit_reason: str
    final: str


SubagentRunner = Callable[[SubagentSpec, str], SubagentOutcome]


def skill_tool(skills: list[SkillDoc]) -> tuple[ToolSpec, Handler]:
    bodies = {skill.name: skill.body for skill in skills}
    spec = ToolSpec(
        name="load_skill",
        description="Load a skill's instructions by name: " + "; ".join(
            f"{s.name} ({s.description})" for s in skills),
        parameters={
            "type": "object",
            "properties": {"name": {"type": "string", "enum": list(bodies)}},
            "required": ["name"],
            "additionalProperties": False,
        },
    )
    return spec, lambda arguments: ToolResult(output=bodies[arguments["name"]])


def delegate_tool(subagents: list[SubagentSpec], run: SubagentRunner) -> tuple[ToolSpec, Handler]:
    by_name = {agent.name: agent for agent in subagents}
    spec = ToolSpec(
        name="delegate",
        description="Hand a focused sub-task to a sub-agent and get its summary back: " + "; ".join(
            f"{a.name} ({a.description})" for a in subagents),
        parameters={
            "type": "object",
            "properties": {
                "agent": {"type": "string", "enum": list(by_name)},
                "task": {"type": "string", "description": "what the sub-agent must do"},
            },
            "required": ["agent", "task"],
            "additionalProperties": False,
        },
    )

    def handle(arguments: dict[str, Any]) -> ToolResult:
        outcome = run(by_name[arguments["agent"]], arguments["task"])
        if outcome.exit_reason == ExitReason.DONE:
            return ToolResult(output=outcome.final)
        partial = refused("transient", f"sub-agent {arguments['agent']} stopped without finishing "
                          f"({outcome.exit_reason})", "give it a smaller task or do the work yourself")
        return partial.model_copy(update={"output": outcome.final})

    return spec, handle


def subagent_prompt(agent: SubagentSpec, settings: Settings, tools: list[ToolSpec]) -> str:
    """A sub-agent's own prompt, followed by its tools and the reply protocol (its yaml has no
    template, so the runtime states what the main prompt's template would)."""
    listing = "\n".join(
        f"- `{t.name}`: {t.description} Arguments (JSON schema): {json.dumps(t.parameters)}"
        for t in tools)
    protocol = format_instructions(settings.action_format, [t.name for t in tools],
                                   settings.thought_chars)
    return f"{agent.system_prompt.strip()}\n\n## Tools\n{listing}\n\n## How to reply\n{protocol}\n"
