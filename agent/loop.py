"""The agent loop: ask the model, parse one action, run it, feed the result back, until `done` or a
budget ends the rollout; every step is an event. Parsing, tools, budgets, compaction, middleware and
delegation each live in their own module; sandboxing and storing traces belong to tasks/ and traces/."""
from __future__ import annotations

import json
import time
from collections.abc import Callable, Collection
from typing import Any

from pydantic import BaseModel, ConfigDict

from evoharness.agent.budget import Budget, Repeats, same_step
from evoharness.agent.compaction import Transcript, step_line
from evoharness.agent.delegate import delegate_tool, skill_tool, subagent_prompt
from evoharness.agent.environment import Environment
from evoharness.agent.events import Event, EventSink
from evoharness.agent.exits import ExitReason, machine_spent
from evoharness.agent.middleware import HOOKS, Middleware
from evoharness.agent.model import Message, Model, ModelError, ModelReply, ToolCall
from evoharness.agent.parsing import Action, ParseError, action_schema, format_instructions, parse_reply
from evoharness.agent.recorder import TOOL_OUTPUT_LIMIT, Recorder, clip
from evoharness.agent.tools import DONE, ToolRegistry, ToolResult, done_tool, harness_tool, refused
from evoharness.workspace.spec import LoadedHarness, Settings, SubagentSpec, ToolSpec
from evoharness.workspace.validate import render_system_prompt

MIN_TOOL_SECONDS = 1.0  # a tool started just before the wall budget ends still gets a moment
BLOCKED = "(blocked by middleware)"  # a blocked call's result for the repeat budget: nothing ran
FRESH_START_CHARS = 1_000  # of the repeated call, and of its result, in a fresh start's task message
RESAMPLE_TEMPERATURE = 1.0  # a resample after a repeated call: hotter than the run, to leave the copy


class AgentResult(BaseModel):
    """How a rollout's agent ended. Tokens include its sub-agents'."""

    model_config = ConfigDict(frozen=True)

    exit_reason: ExitReason
    steps: int
    tokens_in: int
    tokens_out: int
    final: str = ""

    @classmethod
    def from_events(cls, exit_reason: ExitReason, events: list[Event]) -> AgentResult:
        """What an agent that never returned (stopped by the runner, or broken) did, counted from
        its events as the loop counts: a step is an action of the top agent (a sub-agent's steps
        are its delegate call's) or a second unusable reply in a row; tokens are every model
        call's, sub-agents' included."""
        top = [e for e in events if "subagent" not in e.data]
        steps = sum(1 for e in top if e.kind == "tool_call"
                    or (e.kind == "error" and e.name == "ParseError"))
        return cls(exit_reason=exit_reason, steps=steps,
                   tokens_in=sum(e.tokens_in for e in events),
                   tokens_out=sum(e.tokens_out for e in events))


def run_agent(harness: LoadedHarness, model: Model, env: Environment, instruction: str,
              sink: EventSink, *, clock: Callable[[], float] = time.monotonic) -> AgentResult:
    """Run `harness` on one task instruction until `done` or a budget ends it. Never raises for
    what the model or a tool does: those end as an exit_reason and events in `sink`."""
    settings = harness.spec.settings
    recorder = Recorder(sink)
    budget = Budget(settings.budgets, settings.max_steps, clock)
    registry = ToolRegistry()

    def tool_timeout() -> float:
        # A tool may not outlive the rollout's wall budget by more than a moment: the runner's
        # watchdog would otherwise kill the whole rollout instead of the one command.
        return max(MIN_TOOL_SECONDS, min(settings.tool_timeout_seconds, budget.seconds_left()))

    for spec in harness.tools:
        registry.add(spec, harness_tool(spec.name, env, tool_timeout))
    registry.add(DONE, done_tool)
    if harness.skills:
        registry.add(*skill_tool(harness.skills))

    def run_subagent(agent: SubagentSpec, task: str) -> AgentResult:
        tools = registry.subset(agent.tools)
        sub_recorder = recorder.child(subagent=agent.name)
        sub = _Agent(model, tools, Middleware(harness, env, sub_recorder),
                     budget.child(agent.max_steps), sub_recorder, settings)
        return sub.run(subagent_prompt(agent, settings, tools.specs), task)

    if harness.subagents:
        registry.add(*delegate_tool(harness.subagents, run_subagent))
    main = _Agent(model, registry, Middleware(harness, env, recorder), budget, recorder, settings)
    return main.run(render_system_prompt(harness), instruction)


def run_tools_agent(model: Model, registry: ToolRegistry, system_prompt: str, instruction: str,
                    sink: EventSink, settings: Settings, *,
                    decoding_specs: list[ToolSpec] | None = None,
                    allowed_tools: Callable[[], Collection[str] | None] | None = None,
                    clock: Callable[[], float] = time.monotonic) -> AgentResult:
    """Run the same loop over a caller-built toolbox and system prompt, without a harness (so no
    middleware): an agent whose tools are in-process handlers. `registry` should include `done`.
    `decoding_specs`: stricter specs of the same tools for constrained decoding (the registry's
    own checks stay as loose as its handlers can forgive). `allowed_tools`, asked before each
    reply: the tools that reply is decoded under, when not all (None)."""
    budget = Budget(settings.budgets, settings.max_steps, clock)
    agent = _Agent(model, registry, _NoMiddleware(), budget, Recorder(sink), settings,
                   decoding_specs=decoding_specs, allowed_tools=allowed_tools)
    return agent.run(system_prompt, instruction)


class _NoMiddleware(Middleware):
    """Middleware with no hooks: every hook passes its value through unchanged."""

    def __init__(self) -> None:  # nothing to read from a harness, so no super().__init__
        self.hooks = {hook: [] for hook in HOOKS}


class _Agent:
    """One agent (the main one or a sub-agent) over its own transcript and tools."""

    def __init__(self, model: Model, registry: ToolRegistry, middleware: Middleware,
                 budget: Budget, recorder: Recorder, settings: Settings,
                 decoding_specs: list[ToolSpec] | None = None,
                 allowed_tools: Callable[[], Collection[str] | None] | None = None) -> None:
        self.model = model
        self.registry = registry
        self.middleware = middleware
        self.budget = budget
        self.recorder = recorder
        self.settings = settings
        self.native = settings.action_format == "native"
        self.decoding_specs = decoding_specs or registry.specs
        self.temperature = settings.temperature
        self.allowed_tools = allowed_tools
        self.schema = (action_schema(self.decoding_specs, settings.max_output_tokens,
                                     settings.thought_chars)
                       if _constrained(settings, model) else None)

    def run(self, system: str, instruction: str) -> AgentResult:
        task = self.middleware.before_start(instruction)
        transcript = Transcript(system, task)
        retried = False  # the previous reply failed to parse and the model was asked again
        fresh_starts = 0
        while True:
            reason = self.budget.exceeded()
            if reason == ExitReason.REPEATING and fresh_starts < self.settings.fresh_starts:
                fresh_starts += 1
                transcript = Transcript(system, self._start_afresh(task))
                continue
            if reason is not None:
                break
            self._fit_context(transcript)
            try:
                reply = self._ask(transcript)
                action = parse_reply(reply, self.settings.action_format)
                reply, action = self._unrepeated(transcript, reply, action)
            except ModelError as exc:
                self.recorder.emit("error", name="ModelError", content=str(exc),
                                   data={"kind": exc.kind})
                return self._result(ExitReason.MODEL_UNAVAILABLE if exc.kind == "unavailable"
                                    else ExitReason.MODEL_ERROR)
            except ParseError as exc:
                retried = self._parse_failed(transcript, reply, exc, retried)
                continue
            retried = False
            self.budget.steps += 1
            result = self._act(action)
            transcript.add(self._exchange(reply, action, result),
                           step_line(action.tool, action.arguments, result))
            if result.final is not None:
                return self._result(ExitReason.DONE, result.final)
        if reason == ExitReason.WALL_TIME and machine_spent(self.budget.usage.stall_s,
                                                            self.budget.elapsed()):
            reason = ExitReason.MODEL_STALLED  # the time went to a model slowed by the machine
        return self._result(reason)

    def _start_afresh(self, task: str) -> str:
        """The task message of a fresh start after a loop. The small model's loop is a copy of its
        own last action, which a fresh transcript no longer holds; what that action returned is
        kept, so the model need not run it again to know it."""
        tool, arguments, result = self.budget.repeats.last
        times = self.budget.repeats.in_a_row
        self.budget.repeats = Repeats()
        self.recorder.emit("note", name="fresh_start", content=f"{tool} {arguments}",
                           data={"repeated": times, "step": self.budget.steps,
                                 "temperature": self.temperature})
        return (f"{task}\n\nAn earlier attempt at this task was stopped: it made the same {tool} "
                f"call {times} times in a row and got the same result each time.\nThe call: "
                f"{clip(arguments, FRESH_START_CHARS)}\nIts result:\n"
                f"{clip(result, FRESH_START_CHARS)}\n"
                "What it changed is still in place. Go on from there with a different next step.")

    def _unrepeated(self, transcript: Transcript, reply: ModelReply,
                    action: Action) -> tuple[ModelReply, Action]:
        """The reply to act on. A reply that makes the call just made again is set aside and the
        model asked again, hotter (`repeat_resamples`): the small model's loop is a copy of its own
        last action, and a refusal it reads (repeat-breaker) or a quoted call (fresh-start) is
        one more text to copy, while a reply it never sees is not. The set-aside replies stay on
        record as model calls, each followed by a `repeat_resampled` note."""
        temperature = RESAMPLE_TEMPERATURE
        for attempt in range(1, self.settings.repeat_resamples + 1):
            if not self._repeats_last(action) or self.budget.exceeded() is not None:
                break
            self.recorder.emit("note", name="repeat_resampled",
                               content=f"{action.tool} {json.dumps(action.arguments)}",
                               data={"attempt": attempt, "temperature": temperature})
            candidate = self._ask(transcript, temperature)
            try:
                action = parse_reply(candidate, self.settings.action_format)
            except ParseError:
                continue  # an unusable answer is no better than the repeat: ask again
            reply = candidate
        return reply, action

    def _repeats_last(self, action: Action) -> bool:
        """Whether `action` is the call this agent made last, compared as the repeat budget does."""
        last = self.budget.repeats.last
        return last is not None and last[:2] == same_step(action.tool, action.arguments, "")[:2]

    def _ask(self, transcript: Transcript, temperature: float | None = None) -> ModelReply:
        messages = self.middleware.before_model(transcript.messages())
        temperature = self.temperature if temperature is None else temperature
        started = time.perf_counter()
        reply = self._chat(messages, temperature)
        duration_ms = reply.duration_ms or (time.perf_counter() - started) * 1000
        transcript.observe(reply.tokens_in)
        self.budget.charge_tokens(reply.tokens_in, reply.tokens_out)
        if reply.timings is not None and reply.timings.stalled:
            self.budget.usage.stalled_calls += 1
            self.budget.usage.stall_s += reply.timings.stall_ms / 1000
        data: dict[str, Any] = {"tool_calls": [call.model_dump() for call in reply.tool_calls],
                                "temperature": temperature}
        if reply.runaway is not None:  # the reply repeated itself; `content` is what was kept
            data["runaway"] = reply.runaway.model_dump()
        self.recorder.emit(
            "model_call", name=reply.model or self.model.name, content=reply.content,
            tokens_in=reply.tokens_in, tokens_out=reply.tokens_out, duration_ms=duration_ms,
            timings=reply.timings, data=data,
        )
        return self.middleware.after_model(reply)

    def _chat(self, messages: list[Message], temperature: float) -> ModelReply:
        options = dict(tools=self.registry.specs if self.native else None,
                       temperature=temperature, json_mode=not self.native,
                       max_tokens=self.settings.max_output_tokens,
                       context_tokens=self.settings.budgets.context_tokens)
        if self.schema is None:
            return self.model.chat(messages, **options)
        try:
            return self.model.chat(messages, schema=self._reply_schema(), **options)
        except ModelError as exc:
            if exc.kind != "permanent":
                raise
            # An older server, or a tool schema its grammar converter cannot take: go on
            # unconstrained (for the rest of this agent) rather than end the rollout.
            self.schema = None
            self.recorder.emit("note", name="constrained_decoding_off", content=str(exc))
            return self.model.chat(messages, **options)

    def _reply_schema(self) -> dict[str, Any]:
        """The action schema, over the tools the caller allows for this reply."""
        allowed = self.allowed_tools() if self.allowed_tools else None
        if allowed is None:
            return self.schema
        return action_schema([spec for spec in self.decoding_specs if spec.name in allowed],
                             self.settings.max_output_tokens, self.settings.thought_chars)

    def _parse_failed(self, transcript: Transcript, reply: ModelReply, exc: ParseError,
                      retried: bool) -> bool:
        """Tell the model what was wrong. The first failure is retried for free; a second one in a
        row costs a step. Returns whether the next reply is a retry."""
        protocol = format_instructions(self.settings.action_format, self.registry.names,
                                       self.settings.thought_chars)
        feedback = f"Your reply could not be used, so nothing ran: {exc}\n{protocol}"
        call = reply.tool_calls[0] if reply.tool_calls else None
        transcript.add(_reply_and_answer(reply.content, call, feedback), "unusable reply")
        if not retried:
            self.recorder.emit("note", name="parse_retry", content=str(exc))
            return True
        self.budget.steps += 1
        self.recorder.emit("error", name="ParseError", content=str(exc),
                           data={"field": exc.field, "step": self.budget.steps})
        return False

    def _act(self, action: Action) -> ToolResult:
        self.recorder.emit("tool_call", name=action.tool,
                           data={"arguments": action.arguments, "note": action.note})
        started = time.perf_counter()
        checked = self.middleware.before_tool(action)
        if isinstance(checked, str):
            result = refused("permanent", f"blocked by middleware: {checked}",
                             "choose a different action")
            self._count_step(action, BLOCKED)
        elif (exhausted := self.budget.admit_tool(checked.tool)) is not None:
            result = ToolResult(error=exhausted)
            self._count_step(action, result.text())
        else:
            result = self.registry.call(checked.tool, checked.arguments)
            self._count_step(action, result.text())
            result = self.middleware.after_tool(checked.tool, result)
        error = result.error.model_dump() if result.error else None
        self.recorder.emit("tool_result", name=action.tool, content=result.text(),
                           limit=TOOL_OUTPUT_LIMIT,
                           duration_ms=(time.perf_counter() - started) * 1000,
                           data={"exit_code": result.exit_code, "error": error})
        return result

    def _count_step(self, action: Action, result_text: str) -> None:
        """Count a step for the repeat budget: the call as the model made it and the result as its
        tool returned it, clipped as the model reads it. Neither goes through middleware, whose
        text (a refusal that counts itself, a hint) is the harness's and could hide a loop."""
        self.budget.repeats.add(same_step(action.tool, action.arguments,
                                          clip(result_text, self.settings.tool_output_chars)))

    def _exchange(self, reply: ModelReply, action: Action, result: ToolResult) -> list[Message]:
        text = clip(result.text(), self.settings.tool_output_chars)
        if action.note:
            text = f"(note: {action.note})\n{text}"
        # Only the call that ran is kept, so a native transcript has no unanswered tool calls.
        call = (ToolCall(id=action.call_id, name=action.tool, arguments=action.arguments)
                if action.call_id else None)
        return _reply_and_answer(reply.content, call,
                                 text if call else f"Result of {action.tool}:\n{text}")

    def _fit_context(self, transcript: Transcript) -> None:
        limit = self.settings.budgets.context_tokens
        if transcript.estimate() <= limit or len(transcript.exchanges) < 2:
            return
        before, after = transcript.compact()
        self.recorder.emit("note", name="compaction", content=f"context {before} -> {after} tokens",
                           data={"before": before, "after": after, "limit": limit,
                                 "compacted_steps": len(transcript.compacted)})

    def _result(self, exit_reason: ExitReason, final: str = "") -> AgentResult:
        usage = self.budget.usage
        return AgentResult(exit_reason=exit_reason, steps=self.budget.steps,
                           tokens_in=usage.tokens_in, tokens_out=usage.tokens_out, final=final)


def _constrained(settings: Settings, model: Model) -> bool:
    """Whether JSON actions are decoded under the action schema (never for native tool calls: the
    server's own tool-call format applies there)."""
    if settings.action_format != "json" or settings.constrained_decoding == "off":
        return False
    return settings.constrained_decoding == "on" or model.constrains_by_default


def _reply_and_answer(content: str, call: ToolCall | None, answer: str) -> list[Message]:
    """The assistant's turn and what it got back: a tool message for a native call, else a user one."""
    if call is None:
        return [Message(role="assistant", content=content), Message(role="user", content=answer)]
    return [Message(role="assistant", content=content, tool_calls=[call]),
            Message(role="tool", content=answer, tool_call_id=call.id, name=call.name)]
