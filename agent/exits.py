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
    REPEATING = "repeating"  # the same call with the same result budgets.repeated_steps times
    MODEL_UNAVAILABLE = "model_unavailable"  # the server was unreachable: not the harness's fault
    MODEL_ERROR = "model_error"
    # Out of time, and most of the time went to model calls slowed far below their server's best
    # rates (a busy machine): the machine rather than the harness spent it (machine_spent).
    MODEL_STALLED = "model_stalled"
    ROLLOUT_TIMEOUT = "rollout_timeout"  # the runner's watchdog stopped the agent
    SANDBOX_ERROR = "sandbox_error"
    EXCEPTION = "exception"  # a bug or an unexpected failure inside the rollout

    def detailed(self, detail: str) -> str:
        """The stored form of a reason with detail, e.g. 'sandbox_error: bwrap: ...'."""
        return f"{self.value}: {detail}"


# A rollout out of time is the machine's doing when its stalled calls lost at least this share of
# its time. Any stalled call was once enough: with two rollouts on one server, a neighbour's long
# prefill slowed a looping rollout's decoding for 2 of its 14 calls (43 s of 300), and the
# timeout of a harness stuck in a loop read as the machine's.
STALL_SHARE = 0.5


def machine_spent(stall_s: float, elapsed_s: float) -> bool:
    """Whether stalled model calls took most of a rollout that ran `elapsed_s` seconds."""
    return stall_s >= STALL_SHARE * elapsed_s


class CommandExit(StrEnum):
    """How one command in an environment ended (ExecResult.exit_reason)."""

    EXITED = "exited"
    TIMEOUT = "timeout"
    KILLED = "killed"
    OUTPUT_CAP = "output_cap"
    MEMORY_LIMIT = "memory_limit"  # the sandbox's memory cgroup killed it
    DISK_LIMIT = "disk_limit"  # the sandbox's disk watchdog killed it
    SANDBOX_ERROR = "sandbox_error"
