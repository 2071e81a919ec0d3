"""Choosing the sandbox: bubblewrap when installed; otherwise refuse, unless the user passed the
explicit unsafe flag, in which case commands run as plain host processes (UnsafeHostSandbox)."""
from __future__ import annotations

import re
import shutil
import sys
from pathlib import Path

from rich.console import Console

from evoharness.agent.environment import ExecResult
from evoharness.errors import EvoError
from evoharness.tasks.sandbox.leftovers import owned_dir
from evoharness.tasks.sandbox.capture import Hooks, run_capped
from evoharness.tasks.sandbox.limits import Limits
from evoharness.tasks.sandbox.bwrap import HARNESS, BwrapSandbox, Mount, copy_task_files, task_limits
from evoharness.tasks.sandbox.protocol import SandboxFactory
from evoharness.tasks.task import Task

# Absolute sandbox paths that scripts name; on the host they are rewritten under a private root.
_SANDBOX_PATH = re.compile(r"(?<![\w./-])/(app|tests|solution|harness|logs/verifier)(?=[/\s\"'),;:]|$)")


class UnsafeHostSandbox:
    """A Sandbox (tasks/sandbox/protocol.py) with no isolation at all: the commands see the whole host.
    Paths like /app and /tests are rewritten to a private directory, in the command and in the
    text files of extra mounts (copied), which is enough for Harbor-shaped tasks."""

    def __init__(self, app_dir: Path, *, harness_dir: Path | None = None,
                 limits: Limits = Limits(), owns_app: bool = True) -> None:
        self.root = owned_dir("unsafe")
        self.app_dir = Path(app_dir)
        self.owns_app = owns_app
        self.harness_dir = harness_dir
        self.limits = limits
        (self.root / "app").symlink_to(self.app_dir)
        if harness_dir is not None:
            (self.root / "harness").symlink_to(Path(harness_dir).resolve())

    @classmethod
    def for_task(cls, task: Task, *, harness_dir: Path | None = None,
                 limits: Limits | None = None) -> "UnsafeHostSandbox":
        return cls(copy_task_files(task), harness_dir=harness_dir,
                   limits=limits or task_limits(task))

    def fresh_copy(self, task: Task) -> Path:
        return copy_task_files(task)

    def handover(self, app_dir: Path) -> "UnsafeHostSandbox":
        """The same kind of sandbox over `app_dir` (no new identity to give: it is the host's)."""
        return UnsafeHostSandbox(app_dir, limits=self.limits, owns_app=Path(app_dir) != self.app_dir)

    def rewrite(self, text: str) -> str:
        """Sandbox paths (/app, /tests, ...) in `text` as this sandbox's host paths."""
        return _SANDBOX_PATH.sub(lambda m: f"{self.root}/{m.group(1)}", text)

    def _mount(self, mount: Mount) -> None:
        target = self.root / mount.dest.lstrip("/")
        if target.is_symlink():
            target.unlink()
        shutil.rmtree(target, ignore_errors=True)
        if mount.writable:
            target.parent.mkdir(parents=True, exist_ok=True)
            target.symlink_to(mount.source)
            return
        shutil.copytree(mount.source, target)
        for path in target.rglob("*"):
            try:
                if path.is_file():
                    path.write_text(self.rewrite(path.read_text()))
            except UnicodeDecodeError:
                continue  # binary files keep their bytes

    def writable_dir(self, name: str) -> Path:
        return owned_dir(name)

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        return self.run(["bash", "-c", command], timeout=timeout, stdin=stdin, mounts=mounts,
                        env=env)

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        # A tool's arguments name sandbox paths as a command does (the shell tool's command is
        # one); a middleware's payload is the conversation, which stays as the model wrote it.
        if script.startswith("tools/"):
            stdin = self.rewrite(stdin)
        return self.run([sys.executable, f"{HARNESS}/{script}"], timeout=timeout, stdin=stdin)

    def run(self, argv: list[str], *, timeout: float, stdin: str = "",
            mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        for mount in mounts or []:
            self._mount(mount)
        base = {"PATH": f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin", "HOME": str(self.root),
                "LANG": "C.UTF-8"}
        return run_capped([self.rewrite(a) for a in argv], stdin=stdin, timeout=timeout,
                          limits=self.limits, preexec=None, cwd=self.app_dir,
                          hooks=Hooks(env={**base, **(env or {})}))

    def kill_leftovers(self) -> int:
        return 0  # no private uid to find them by; each command's group was killed on timeout

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
        if self.owns_app:
            shutil.rmtree(self.app_dir, ignore_errors=True)


def require_sandbox(unsafe: bool = False) -> SandboxFactory:
    """The sandbox factory to run tasks with; refuses without bubblewrap unless `unsafe`."""
    if shutil.which("bwrap"):
        return BwrapSandbox.for_task
    if not unsafe:
        raise EvoError("bubblewrap (bwrap) is not installed, so task commands cannot be sandboxed",
                       field="sandbox", hint="install it (apt install bubblewrap), or pass "
                       "--unsafe-no-sandbox to run agent commands directly on this machine")
    Console(stderr=True).print(
        "[bold red]WARNING: --unsafe-no-sandbox: agent and harness code run on this machine "
        "with your permissions, network access and no limits but timeouts.[/]")
    return UnsafeHostSandbox.for_task
