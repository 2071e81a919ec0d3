"""The ways things end, defined once and compared by name: an agent session (ExitReason, which also
names the runner's rollout-level reasons) and one sandboxed command (CommandExit)."""
from __future__ import annotations

from enum import StrEnum


class ExitReason(StrEnum):
    """Why an agent session (and so a rollout) ended. A rollout's stored exit_reason is one of
    these, followed by ": <detail>" for SANDBOX_ERROR and EXCEPTION."""

    DONE = "done"
    MAX_STEPS = "max_steps"
    TOKEN_BUDGET = "token_budget"
    WALL_TIME = "wall_time"
    TOOL_BUDGET = "tool_budget"  # the model asked again for a tool whose budget is spent
    MODEL_UNAVAILABLE = "model_unavailable"  # the server was unreachable: not the harness's fault
    MODEL_ERROR = "model_error"
    # Out of time after model calls that ran far slower than their server had (a busy machine):
    # the time limit ended the rollout, the machine rather than the harness spent the time.
    MODEL_STALLED = "model_stalled"
    ROLLOUT_TIMEOUT = "rollout_timeout"  # the runner's watchdog stopped the agent
    SANDBOX_ERROR = "sandbox_error"
    EXCEPTION = "exception"  # a bug or an unexpected failure inside the rollout

    def detailed(self, detail: str) -> str:
        """The stored form of a reason with detail, e.g. 'sandbox_error: bwrap: ...'."""
        return f"{self.value}: {detail}"


class CommandExit(StrEnum):
    """How one command in an environment ended (ExecResult.exit_reason)."""

    EXITED = "exited"
    TIMEOUT = "timeout"
    KILLED = "killed"
    OUTPUT_CAP = "output_cap"
    MEMORY_LIMIT = "memory_limit"  # the sandbox's memory cgroup killed it
    DISK_LIMIT = "disk_limit"  # the sandbox's disk watchdog killed it
    SANDBOX_ERROR = "sandbox_error"
