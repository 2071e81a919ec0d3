"""Where harness code runs: the protocol the agent uses to execute a harness script (a tool
implementation or a middleware hook). tasks/sandbox/bwrap.py provides the bubblewrap implementation; the
agent never runs harness code in its own process."""
from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, ConfigDict

from evoharness.agent.exits import CommandExit


class ExecResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    exit_code: int  # -signal when killed
    output: str  # stdout+stderr, capped (head and tail kept) by the environment
    timed_out: bool = False
    truncated: bool = False
    duration_ms: float = 0.0
    exit_reason: CommandExit = CommandExit.EXITED


class Environment(Protocol):
    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """Run `python3 <harness>/<script>` with `stdin`, working directory the task's /app.

        `script` is relative to the harness directory (e.g. "tools/shell.py"). The harness is
        read-only to the script; only the task's files are writable.
        """
        ...
