"""The tool registry: every tool the model may call (the harness's tools run in the Environment, plus
the built-in `done`), each call checked against its JSON schema before dispatch, failures returned as
structured ToolErrors the model reads. Budgets and skills/sub-agents live in budget.py and delegate.py;
how a schema is checked (bounded, nothing fetched) is workspace/schemas.py's."""
from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

from pydantic import BaseModel, ConfigDict

from evoharness.agent.environment import Environment, ExecResult
from evoharness.agent.model import ErrorKind
from evoharness.errors import EvoError
from evoharness.workspace.schemas import ToolSchema
from evoharness.workspace.spec import ToolSpec


class ToolError(BaseModel):
    """What went wrong with a tool call and what the model should do about it.
    transient: retrying (differently) may work; permanent: this call cannot work; unavailable: the
    environment itself is broken."""

    model_config = ConfigDict(frozen=True)

    kind: ErrorKind
    message: str
    suggestion: str

    def render(self) -> str:
        return f"ERROR ({self.kind}): {self.message}\nSuggestion: {self.suggestion}"


class ToolResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    output: str = ""
    exit_code: int | None = None
    error: ToolError | None = None
    final: str | None = None  # set by `done`: the rollout's final summary

    def text(self) -> str:
        """The tool result exactly as the model reads it."""
        if self.error is None:
            return self.output
        return self.error.render() + (f"\nOutput:\n{self.output}" if self.output else "")


Handler = Callable[[dict[str, Any]], ToolResult]

DONE = ToolSpec(
    name="done",
    description="Finish the task. Call it once the work is complete and checked.",
    parameters={
        "type": "object",
        "properties": {"summary": {"type": "string", "description": "what was done"}},
        "required": ["summary"],
        "additionalProperties": False,
    },
)


def refused(kind: ErrorKind, message: str, suggestion: str) -> ToolResult:
    return ToolResult(error=ToolError(kind=kind, message=message, suggestion=suggestion))


class ToolRegistry:
    """Name → (spec, handler). `call` never raises for a bad call: the model gets a ToolError."""

    def __init__(self) -> None:
        self._tools: dict[str, tuple[ToolSpec, Handler, ToolSchema]] = {}

    def add(self, spec: ToolSpec, handler: Handler) -> None:
        if spec.name in self._tools:
            raise EvoError("tool registered twice", field="tools", value=spec.name,
                           hint="built-in tools (done, load_skill, delegate) cannot be redefined")
        self._tools[spec.name] = (spec, handler, ToolSchema(spec.parameters))

    @property
    def specs(self) -> list[ToolSpec]:
        return [spec for spec, _, _ in self._tools.values()]

    @property
    def names(self) -> list[str]:
        return list(self._tools)

    def subset(self, names: list[str]) -> ToolRegistry:
        """The same tools restricted to `names` (plus `done`): a sub-agent's toolbox."""
        sub = ToolRegistry()
        for name in dict.fromkeys([*names, DONE.name]):  # a sub-agent may list done itself
            spec, handler, _ = self._tools[name]
            sub.add(spec, handler)
        return sub

    def call(self, name: str, arguments: dict[str, Any]) -> ToolResult:
        if name not in self._tools:
            return refused("permanent", f"unknown tool {name!r}",
                           f"use one of: {', '.join(self._tools)}")
        spec, handler, schema = self._tools[name]
        problems = schema.problems(arguments)
        if problems:
            return refused("permanent", f"invalid arguments for {name}: " + "; ".join(problems),
                           f"call {name} with arguments matching {json.dumps(spec.parameters)}")
        return handler(arguments)


def harness_tool(name: str, env: Environment, timeout: Callable[[], float]) -> Handler:
    """A harness tool: tools/<name>.py run in the Environment with the JSON arguments on stdin;
    `timeout` is asked at each call (the rollout's remaining wall time may be shorter)."""

    def run(arguments: dict[str, Any]) -> ToolResult:
        seconds = timeout()
        result = env.run_python(f"tools/{name}.py", json.dumps(arguments), timeout=seconds)
        return from_exec(result, seconds)

    return run


# The sandbox's resource limits (tasks/sandbox/limits.py), as the model reads them.
_LIMITS = {"memory_limit": "it used more memory than the task allows",
           "disk_limit": "its files grew past the task's disk limit"}


def from_exec(result: ExecResult, timeout: float) -> ToolResult:
    """A nonzero exit is ordinary output (the tool reports it); only the sandbox's verdicts are errors."""
    if result.exit_reason == "sandbox_error":
        return ToolResult(output=result.output, exit_code=result.exit_code, error=ToolError(
            kind="unavailable", message="the sandbox failed to run the tool",
            suggestion="finish with done and report the problem; retrying will not help"))
    if result.exit_reason in _LIMITS:
        return ToolResult(output=result.output, exit_code=result.exit_code, error=ToolError(
            kind="permanent", message=f"the command was stopped: {_LIMITS[result.exit_reason]}",
            suggestion="use less: stream or split the data, delete what is no longer needed"))
    if result.timed_out or result.exit_reason in ("timeout", "killed"):
        return ToolResult(output=result.output, exit_code=result.exit_code, error=ToolError(
            kind="transient", message=f"the tool was stopped ({result.exit_reason}) after {timeout:g}s",
            suggestion="run something shorter: limit the output, split the work, or background "
                       "long processes and poll them"))
    return ToolResult(output=result.output, exit_code=result.exit_code)


def done_tool(arguments: dict[str, Any]) -> ToolResult:
    return ToolResult(output="finished", final=arguments["summary"])
