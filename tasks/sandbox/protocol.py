"""The Sandbox protocol: what a rollout's sandbox offers its callers (the runner, the verifier, task
checks). BwrapSandbox (sandbox.py) runs tasks on this host, ContainerSandbox (container.py) in
their own image, UnsafeHostSandbox (unsafe.py) is the explicit no-isolation one; choosing between
them is environments.py's (and unsafe.require_sandbox's, for the host)."""
from __future__ import annotations

from pathlib import Path
from typing import Protocol

from evoharness.agent.environment import ExecResult
from evoharness.tasks.sandbox.bwrap import Mount
from evoharness.tasks.task import Task


class Sandbox(Protocol):
    """One rollout's private copy of a task's files (/app), used for many commands."""

    app_dir: Path  # the host directory that is /app

    def fresh_copy(self, task: Task) -> Path:
        """A new private copy of `task`'s /app as it starts: what a separate verifier's
        artifacts are copied over (environment/ for bubblewrap, the image's /app for a
        container)."""
        ...

    def handover(self, app_dir: Path) -> Sandbox:
        """A sandbox of the same kind over `app_dir` as a new identity: the verifier's."""
        ...

    def kill_leftovers(self) -> int:
        """Kill every process the sandbox's commands left; returns how many."""
        ...

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """Run a harness script (relative to the harness directory) with cwd /app."""
        ...

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None) -> ExecResult:
        """Run `bash -c command` in /app; extra mounts only for this command."""
        ...

    def run(self, argv: list[str], *, timeout: float, stdin: str = "",
            mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        """Run argv in /app; `env` adds variables (as environment, never as shell text)."""
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
