"""The scripted model: a deterministic test double chosen like any other model (`scripted:NAME` for a
built-in policy, `scripted:PATH` for a script file), so tests and benchmarks drive the real loop
without a server. Its replies are never presented as what a real model did.

A script (YAML or JSON) is a list of rules; the first rule whose conditions hold for a conversation
answers it, with the reply numbered by how many replies the conversation already holds (past the
end of a rule's list: `done`). The reply depends only on the conversation, so concurrent rollouts
can share one model and a resumed session replays the same script.

A rule with `probability` p < 1 answers only a share p of rollouts (else the next rule that holds
does): a known pass probability per harness, for tests of the keep/revert decision. The coin is
drawn once per rollout and rule from the script's `seed` and the rollout's key (the runner binds
the model to each rollout with `for_rollout`), so a rollout run again draws the same. A call's
sampling `seed` is not used: the coins stay independent between the arms of a trial's pair,
which is what the trial's error rates were measured with."""
from __future__ import annotations

import hashlib
import json
import os
import re
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evoharness.agent.model import (ErrorKind, Message, ModelClient, ModelError, ModelReply,
                                    ModelRequest, ToolCall)
from evoharness.errors import EvoError, ValidationFailed, validation_problems

BUILTIN_DIR = Path(__file__).with_name("scripts")
_RUN_LINE = re.compile(r"^RUN: (.+)$", re.MULTILINE)

Reply = ModelReply | str | ModelError | Callable[[list[Message]], "ModelReply | str"]


class ScriptedModel(ModelClient):
    """Replays a fixed list of replies in order (for unit tests built in code): a str becomes a
    reply with that content, a ModelError is raised, a callable gets the messages."""

    constrains_by_default = False  # its replies are what the test wrote, schema or not

    def __init__(self, replies: Iterable[Reply], name: str = "scripted", tokens: int = 10) -> None:
        self.replies = list(replies)
        self.name = name
        self.tokens = tokens
        self.calls: list[list[Message]] = []

    def respond(self, request: ModelRequest) -> ModelReply:
        messages = request.messages
        self.calls.append(list(messages))
        if not self.replies:
            raise ModelError("script exhausted", kind="permanent", field="ScriptedModel.replies")
        reply = self.replies.pop(0)
        if callable(reply) and not isinstance(reply, ModelError):
            reply = reply(messages)
        if isinstance(reply, ModelError):
            raise reply
        if isinstance(reply, str):
            return ModelReply(content=reply, tokens_in=self.tokens, tokens_out=self.tokens,
                              model=self.name)
        return reply


def json_action(tool: str, **arguments: object) -> str:
    """The JSON action format's reply text for one tool call."""
    return json.dumps({"tool": tool, "arguments": arguments})


def native_call(tool: str, call_id: str = "call_1", **arguments: object) -> ModelReply:
    return ModelReply(content="", tool_calls=[ToolCall(id=call_id, name=tool, arguments=arguments)])


class ScriptReply(BaseModel):
    """One reply: a tool call, the shell tool running the instruction's `RUN:` line, verbatim
    text, text quoted from the conversation's last message (`quote`: a regular expression, dot
    matching newlines; the reply is its first group, or the whole match, or "" when it does not
    match), or a model error; `wait_s` first holds the conversation there (a test's kill point),
    and while it holds a file named for this process's id is in the directory `hold_marks`, so a
    test waits for the hold itself, not for a sign that comes before it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    tool: str | None = None
    arguments: dict[str, Any] = Field(default_factory=dict)
    run_line: bool = False
    text: str | None = None
    quote: str | None = None
    error: ErrorKind | None = None
    wait_s: float = Field(0.0, ge=0)
    hold_marks: Path | None = None

    @model_validator(mode="after")
    def _one_kind(self) -> ScriptReply:
        kinds = [self.tool is not None, self.run_line, self.text is not None,
                 self.quote is not None, self.error is not None]
        if sum(kinds) != 1:
            raise ValueError("give exactly one of tool, run_line, text, quote, error")
        _check_pattern(self.quote, "quote")
        return self


def _check_pattern(pattern: str | None, name: str) -> None:
    """A bad pattern is the script's error, named when it loads."""
    if pattern is not None:
        try:
            re.compile(pattern)
        except re.error as error:
            raise ValueError(f"{name} is not a regular expression: {error}") from None


class When(BaseModel):
    """Conditions on the conversation, all of which must hold (none: always). `rollout_matches`:
    a regular expression searched in the key of the rollout the model is bound to ("RUN/ROLLOUT",
    e.g. "exam-it000-1a2b3c4d/it003-write-gamma-a05"): outcomes that differ by attempt, without
    a coin."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    system_has: list[str] = Field(default_factory=list)
    system_lacks: list[str] = Field(default_factory=list)
    instruction_has: list[str] = Field(default_factory=list)
    rollout_matches: str | None = None

    @model_validator(mode="after")
    def _pattern(self) -> When:
        _check_pattern(self.rollout_matches, "rollout_matches")
        return self

    def holds(self, system: str, instruction: str, rollout: str = "") -> bool:
        return (all(s in system for s in self.system_has)
                and not any(s in system for s in self.system_lacks)
                and all(s in instruction for s in self.instruction_has)
                and (self.rollout_matches is None
                     or re.search(self.rollout_matches, rollout) is not None))


class Rule(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    when: When = Field(default_factory=When)
    replies: list[ScriptReply] = Field(default_factory=list)
    probability: float = Field(1.0, ge=0, le=1, description=(
        "the share of rollouts this rule answers (a seeded coin per rollout); else it is skipped"))


class Script(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    rules: list[Rule] = Field(min_length=1)
    latency_s: float = Field(0.0, ge=0, description="seconds every reply takes")
    seed: str = Field("", description="mixed into every rule's coin (see `Rule.probability`)")


DONE = ScriptReply(tool="done", arguments={"summary": "scripted: nothing more to do"})


class RuleModel(ModelClient):
    """The Model protocol over a Script; stateless, so threads may share it."""

    constrains_by_default = False  # its replies are what the script says, schema or not

    def __init__(self, script: Script, name: str, rollout: str = "") -> None:
        self.script = script
        self.name = name
        self.rollout = rollout  # the key the rules' coins are drawn for

    def for_rollout(self, key: str) -> RuleModel:
        """This model for one rollout: its coins are drawn for `key` (run and rollout id)."""
        return RuleModel(self.script, self.name, key)

    def _answers(self, index: int, rule: Rule) -> bool:
        """The rule's coin for this rollout: a uniform draw from a hash of seed, key and rule."""
        if rule.probability >= 1.0:
            return True
        digest = hashlib.sha256(f"{self.script.seed}|{self.rollout}|{index}".encode()).digest()
        return int.from_bytes(digest[:8], "big") / 2 ** 64 < rule.probability

    def respond(self, request: ModelRequest) -> ModelReply:
        messages = request.messages
        system = next((m.content for m in messages if m.role == "system"), "")
        instruction = next((m.content for m in messages if m.role == "user"), "")
        rule = next((r for i, r in enumerate(self.script.rules)
                     if r.when.holds(system, instruction, self.rollout)
                     and self._answers(i, r)), None)
        turn = sum(m.role == "assistant" for m in messages)
        reply = rule.replies[turn] if rule and turn < len(rule.replies) else DONE
        _hold(self.script.latency_s + reply.wait_s, reply.hold_marks)
        if reply.error is not None:
            raise ModelError(f"scripted {reply.error} error", kind=reply.error, field="model",
                             value=self.name)
        tool, arguments = _action(reply, instruction)
        prompt_chars = sum(len(m.content) for m in messages)
        if reply.quote is not None:
            content, calls = _quoted(reply.quote, messages[-1].content if messages else ""), []
        elif tool is None:
            content, calls = reply.text or "", []
        elif request.tools is not None:  # the native action format: a tool call, no text
            content, calls = "", [ToolCall(id=f"call_{turn}", name=tool, arguments=arguments)]
        else:
            content, calls = json.dumps({"thought": "scripted", "tool": tool,
                                         "arguments": arguments}), []
        return ModelReply(content=content, tool_calls=calls, tokens_in=prompt_chars // 4 + 1,
                          tokens_out=len(content) // 4 + 1, model=self.name)


def _action(reply: ScriptReply, instruction: str) -> tuple[str | None, dict[str, Any]]:
    if not reply.run_line:
        return reply.tool, reply.arguments
    found = _RUN_LINE.search(instruction)
    if found is None:
        return DONE.tool, {"summary": "scripted: the instruction has no RUN line"}
    return "shell", {"command": found.group(1)}


def _quoted(pattern: str, text: str) -> str:
    found = re.search(pattern, text, re.DOTALL)
    if found is None:
        return ""
    return found.group(1) if found.re.groups else found.group(0)


def script_file(source: str) -> Path | None:
    """The script a `scripted:` spec names (a built-in policy or an existing file), else None."""
    builtin = BUILTIN_DIR / f"{source}.yaml"
    if re.fullmatch(r"[a-z0-9-]+", source) and builtin.is_file():
        return builtin
    path = Path(source).expanduser()
    return path if path.is_file() else None


def builtin_policies() -> list[str]:
    return sorted(p.stem for p in BUILTIN_DIR.glob("*.yaml"))


def _hold(seconds: float, marks: Path | None) -> None:
    if marks is None or not seconds:
        time.sleep(seconds)
        return
    mark = marks / str(os.getpid())
    marks.mkdir(parents=True, exist_ok=True)
    mark.touch()
    try:
        time.sleep(seconds)
    finally:
        mark.unlink(missing_ok=True)


def load_script(path: Path) -> Script:
    """Read and validate a script file; every problem names the file and the field."""
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, yaml.YAMLError) as error:
        raise EvoError(f"cannot read the model script: {error}", file=path) from error
    try:
        return Script.model_validate(raw)
    except ValidationError as error:
        raise ValidationFailed(f"model script {path}",
                               validation_problems(error, file=path)) from None


def scripted_model(source: str) -> RuleModel:
    path = script_file(source)
    if path is None:
        raise EvoError("no model script here", field="model", value=f"scripted:{source}",
                       hint=f"name a script file, or one of the built-in policies: "
                            f"{', '.join(builtin_policies())}")
    return RuleModel(load_script(path), name=f"scripted:{path.stem}")
