"""The Sandbox protocol: what a rollout's sandbox offers its callers (the runner, the verifier, task
checks). BwrapSandbox (sandbox.py) is the default implementation, UnsafeHostSandbox (unsafe.py)
the explicit no-isolation one; choosing between them is unsafe.require_sandbox's job."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from agent.environment import ExecResult
from tasks.sandbox import Mount
from tasks.task import Task

class Sandbox(Protocol):
    """One rollout's private copy of a task's files (/app), used for many commands."""

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """Run a harness script (relative to the harness directory) with cwd /app."""
        ...

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None) -> ExecResult:
        """Run `bash -c command` in /app; extra mounts only for this command."""
        ...

    def writable_dir(self, name: str) -> Path:
        """A fresh host directory the sandbox's commands may write (e.g. /logs/verifier)."""
        ...

    def close(self) -> None:
        """Kill what is left and delete the sandbox's files."""
        ...


class SandboxFactory(Protocol):
    """Makes a task's sandbox (BwrapSandbox.for_task, UnsafeHostSandbox.for_task)."""

    def __call__(self, task: Task, *, harness_dir: Path | None = None) -> Sandbox: ...
