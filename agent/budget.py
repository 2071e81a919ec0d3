"""A rollout's budgets enforced in code: steps, total tokens, wall time, calls per tool and steps
repeated in a row, checked in one place before each model call. Reading the limits from
harness.yaml is workspace/'s job."""
from __future__ import annotations

import json
import re
from collections import Counter
from collections.abc import Callable, Hashable
from dataclasses import dataclass, field
from typing import Any

from evoharness.agent.exits import ExitReason
from evoharness.agent.tools import ToolError
from evoharness.workspace.spec import Budgets


@dataclass
class _Usage:
    """What a rollout has spent; shared by the main agent and its sub-agents."""

    started: float
    tokens_in: int = 0
    tokens_out: int = 0
    tool_calls: Counter[str] = field(default_factory=Counter)
    refusals: Counter[str] = field(default_factory=Counter)
    stalled_calls: int = 0  # model calls far slower than their server has been
    stall_s: float = 0.0  # what they took beyond their server's best rates


class Repeats:
    """How many steps in a row, up to the latest, were the same step."""

    def __init__(self) -> None:
        self.last: Hashable = None
        self.in_a_row = 0

    def add(self, step: Hashable) -> int:
        self.in_a_row = self.in_a_row + 1 if step == self.last else 1
        self.last = step
        return self.in_a_row


# What changes between two runs of one command when nothing else did: the time it took ("1 failed
# in 0.51s", bash's "real 0m0.003s"). Left in, the 1.5B running the same failing pytest 16 times
# until its rollout timed out never counted as repeating.
ELAPSED = re.compile(r"\b\d+(?:\.\d+)?(?:m\d+(?:\.\d+)?)?\s?(?:s|ms|secs?|seconds?)\b")


def same_step(tool: str, arguments: dict[str, Any], result: str) -> tuple[str, str, str]:
    """A step as the repeat budget compares it: the call as the model made it, and the result as
    its tool returned it (the loop's _count_step), elapsed times aside."""
    return tool, json.dumps(arguments, sort_keys=True), ELAPSED.sub("<elapsed>", result)


class Budget:
    def __init__(self, budgets: Budgets, max_steps: int, clock: Callable[[], float],
                 usage: _Usage | None = None) -> None:
        self.budgets = budgets
        self.max_steps = max_steps
        self.clock = clock
        self.usage = usage or _Usage(started=clock())
        self.steps = 0
        self.repeats = Repeats()  # this agent's own: a sub-agent's steps are not its parent's

    def child(self, max_steps: int) -> Budget:
        """A sub-agent's budget: its own step limit, the rollout's tokens, time and tool calls."""
        return Budget(self.budgets, max_steps, self.clock, self.usage)

    def exceeded(self) -> ExitReason | None:
        """The exit reason when a budget is spent, else None. The loop calls this before each
        model call, so no call starts on a spent budget."""
        if self.steps >= self.max_steps:
            return ExitReason.MAX_STEPS
        if self.usage.tokens_in + self.usage.tokens_out >= self.budgets.tokens:
            return ExitReason.TOKEN_BUDGET
        if self.seconds_left() <= 0:
            return ExitReason.WALL_TIME
        # The model was told once that the tool is exhausted and asked for it again: it is stuck.
        if any(n > 1 for n in self.usage.refusals.values()):
            return ExitReason.TOOL_BUDGET
        if 0 < self.budgets.repeated_steps <= self.repeats.in_a_row:
            return ExitReason.REPEATING
        return None

    def elapsed(self) -> float:
        return self.clock() - self.usage.started

    def seconds_left(self) -> float:
        return self.budgets.wall_seconds - self.elapsed()

    def charge_tokens(self, tokens_in: int, tokens_out: int) -> None:
        self.usage.tokens_in += tokens_in
        self.usage.tokens_out += tokens_out

    def admit_tool(self, name: str) -> ToolError | None:
        """Count one call of `name`, or refuse it when its per-tool limit is reached."""
        limit = self.budgets.tool_calls.get(name)
        if limit is not None and self.usage.tool_calls[name] >= limit:
            self.usage.refusals[name] += 1
            return ToolError(kind="permanent", message=f"budget exhausted for tool {name} "
                             f"({limit} calls)", suggestion="use another tool or finish with done")
        self.usage.tool_calls[name] += 1
        return None
