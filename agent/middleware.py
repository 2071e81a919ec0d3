"""Running a harness's middleware hooks (before_start, before_model, after_model, before_tool,
after_tool) inside the Environment, never in the agent's process; writing the hooks is the
harness's business.

The harness-side contract: middleware/<name>.py defines any of the four hook functions at top level
and ends with this runner, because the Environment runs a script file with JSON on stdin (each call
a fresh process: a hook keeps no state of its own, the context below is its memory):

    if __name__ == "__main__":
        import json, sys
        request = json.load(sys.stdin)     # {"hook": "<hook name>", "payload": ..., "context": ...}
        result = globals()[request["hook"]](request["payload"], request["context"])
        if result is not None:
            print(json.dumps(result))      # the modified payload; nothing = unchanged

Payloads: before_start gets the task's instruction (a string) before the agent's first model call
and may return a longer one (at most START_CHARS): unlike before_model's note, it stays in the
transcript, so it is read once and the prompt cache keeps it (what /app holds, say);
before_model gets the message list ([{"role", "content", ...}]) and may return a new list
(used for that model call only); after_model gets the reply {"content", "tool_calls", ...};
before_tool gets {"tool", "arguments"} and may return a changed call or {"block": "reason"};
after_tool gets {"tool", "output", "exit_code", "error", ...}. Only hooks a file defines are run.
A hook that crashes, times out or prints something invalid is skipped with an error event.
The context (a hook may ignore it, and a one-argument hook with `...(request["payload"])` in its
runner still works): {"instruction": the task as the agent got it, "max_steps": the harness's
step limit, "calls": tool calls made so far, "history": the last HISTORY calls, oldest first, each
{"tool", "arguments", "output" (clipped), "exit_code", "error" (message or null), "blocked" (the
reason a before_tool hook gave, or null)}}. evolve/agent/templates/components.md is the same
contract as the evolve agent reads it.
"""
from __future__ import annotations

import ast
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from pydantic import TypeAdapter, ValidationError

from evoharness.agent.environment import Environment
from evoharness.agent.model import Message, ModelReply
from evoharness.agent.parsing import Action
from evoharness.agent.recorder import Recorder, clip
from evoharness.agent.tools import ToolResult
from evoharness.files import read_text_inside
from evoharness.workspace.bounded import MAX_FILE_BYTES
from evoharness.workspace.spec import MIDDLEWARE_HOOKS, LoadedHarness

HOOKS = MIDDLEWARE_HOOKS
START_CHARS = 16_000  # an instruction a before_start hook returns: a bound on every later prompt
HISTORY = 12  # calls a hook's context holds: enough to see a loop, small enough to pass on stdin
HISTORY_OUTPUT = 1500  # characters of each call's output in the context (head and tail)
T = TypeVar("T")
_MESSAGES = TypeAdapter(list[Message])


class HookFailed(Exception):
    """Internal: one hook run that produced nothing usable; it is reported and skipped."""


def defined_hooks(root: Path, rel: str) -> set[str]:
    """The hook functions a middleware file defines at top level (validate.py made sure it parses)."""
    tree = ast.parse(read_text_inside(root, rel, limit=MAX_FILE_BYTES))
    return {node.name for node in tree.body if isinstance(node, ast.FunctionDef)} & set(HOOKS)


class Middleware:
    context: HookContext | None = None  # None: no harness, no hooks (loop.py's _NoMiddleware)

    def __init__(self, harness: LoadedHarness, env: Environment, recorder: Recorder) -> None:
        self.env = env
        self.recorder = recorder
        self.timeout = harness.spec.settings.tool_timeout_seconds
        self.hooks: dict[str, list[str]] = {hook: [] for hook in HOOKS}
        for name in harness.middleware:
            for hook in defined_hooks(harness.root, f"middleware/{name}.py"):
                self.hooks[hook].append(name)
        self.context = HookContext(max_steps=harness.spec.settings.max_steps)

    def before_start(self, instruction: str) -> str:
        """The task message the agent starts from. The hooks see the task as given, in `context`
        too, whatever an earlier hook added."""
        if self.context:
            self.context.instruction = instruction
        return self._apply("before_start", instruction, str, _load_instruction)

    def before_model(self, messages: list[Message]) -> list[Message]:
        return self._apply("before_model", messages, _MESSAGES.dump_python, _MESSAGES.validate_python)

    def after_model(self, reply: ModelReply) -> ModelReply:
        return self._apply("after_model", reply, ModelReply.model_dump, ModelReply.model_validate)

    def before_tool(self, action: Action) -> Action | str:
        """The (possibly changed) action, or the reason a middleware blocked it."""
        result = self._apply("before_tool", action, _call_payload, _load_call)
        if isinstance(result, Action):  # keep the call id and thought the hook never saw
            result = action.model_copy(update={"tool": result.tool, "arguments": result.arguments})
        if self.context:
            self.context.called(action if isinstance(result, str) else result,
                                result if isinstance(result, str) else None)
        return result

    def after_tool(self, tool: str, result: ToolResult) -> ToolResult:
        result = self._apply("after_tool", result, lambda r: {"tool": tool, **r.model_dump()},
                             ToolResult.model_validate)
        if self.context:
            self.context.returned(result)
        return result

    def _apply(self, hook: str, value: T, dump: Callable[[T], Any], load: Callable[[Any], T]) -> T:
        for name in self.hooks[hook]:
            try:
                changed = self._run(name, hook, dump(value), load)
            except HookFailed as exc:
                self.recorder.emit("error", name=f"middleware:{name}", content=str(exc),
                                   data={"hook": hook, "skipped": True})
                continue
            if changed is None:
                continue
            value = changed
            blocked = isinstance(value, str)
            self.recorder.emit("middleware", name=name, content=json.dumps(_dump_any(value)),
                               data={"hook": hook, "action": "block" if blocked else "modify"})
            if blocked:  # a blocked call is final: later middleware never sees it
                break
        return value

    def _run(self, name: str, hook: str, payload: Any, load: Callable[[Any], T]) -> T | None:
        context = self.context.dump() if self.context else {}
        request = json.dumps({"hook": hook, "payload": payload, "context": context})
        result = self.env.run_python(f"middleware/{name}.py", request, timeout=self.timeout)
        if result.exit_code != 0 or result.timed_out:
            raise HookFailed(f"{hook} failed ({result.exit_reason}, exit {result.exit_code}): "
                             f"{result.output[-1000:]}")
        text = result.output.strip()
        if not text:
            return None
        try:
            return load(json.loads(text))
        except (json.JSONDecodeError, ValidationError, TypeError, ValueError) as exc:
            raise HookFailed(f"{hook} printed an unusable payload ({exc}): {text[:500]}") from None


class HookContext:
    """What the hooks are told besides their payload: the task, the step limit and the recent calls
    with their results (a hook is a fresh process each time, so this is its only memory)."""

    def __init__(self, max_steps: int) -> None:
        self.instruction: str | None = None
        self.max_steps = max_steps
        self.calls = 0
        self.history: list[dict[str, Any]] = []

    def called(self, action: Action, blocked: str | None) -> None:
        """A call that middleware let through (it runs next) or blocked (it never runs)."""
        self.calls += 1
        self.history.append({"tool": action.tool, "arguments": action.arguments, "output": "",
                             "exit_code": None, "error": None, "blocked": blocked})
        del self.history[:-HISTORY]

    def returned(self, result: ToolResult) -> None:
        """The result of the last call let through, as after_tool left it."""
        if self.history and self.history[-1]["blocked"] is None:
            self.history[-1].update(output=clip(result.output, HISTORY_OUTPUT),
                                    exit_code=result.exit_code,
                                    error=result.error.message if result.error else None)

    def dump(self) -> dict[str, Any]:
        return {"instruction": self.instruction or "", "max_steps": self.max_steps,
                "calls": self.calls, "history": self.history}


def _dump_any(value: Any) -> Any:
    if isinstance(value, list):
        return [_dump_any(v) for v in value]
    return value.model_dump() if hasattr(value, "model_dump") else value


def _load_instruction(raw: Any) -> str:
    if not isinstance(raw, str):
        raise TypeError(f"before_start must print a JSON string, not {type(raw).__name__}")
    if len(raw) > START_CHARS:
        raise ValueError(f"the instruction it returned has {len(raw):,} characters, more than "
                         f"{START_CHARS:,}")
    return raw


def _call_payload(action: Action) -> dict[str, Any]:
    return {"tool": action.tool, "arguments": action.arguments}


def _load_call(raw: Any) -> Action | str:
    if isinstance(raw, dict) and "block" in raw:
        return str(raw["block"])
    if not isinstance(raw, dict) or not isinstance(raw.get("arguments"), dict):
        raise ValueError('expected {"tool": ..., "arguments": {...}} or {"block": "reason"}')
    return Action(tool=str(raw.get("tool", "")), arguments=raw["arguments"])
