"""Where task commands run: a bubblewrap sandbox per rollout (the task's files writable at /app,
the system read-only, no network, own PID namespace, rlimits, capped output, group kill on
timeout). What runs in it (agent tools, verifier, oracle) is decided by its callers."""
from __future__ import annotations

import os
import random
import resource
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

from agent.environment import ExecResult
from tasks.task import Task

APP = "/app"
HARNESS = "/harness"
# System paths a task needs to run shell tools and Python; everything else on the host is absent.
_ETC = ["passwd", "group", "nsswitch.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
        "alternatives", "localtime"]
_TOP = ["bin", "sbin", "lib", "lib32", "lib64"]


class Limits(BaseModel):
    """Per-command resource limits; output beyond `output_bytes` keeps head and tail only."""

    model_config = ConfigDict(frozen=True)

    nproc: int = 256
    memory_mb: int = 2048
    fsize_mb: int = 256
    output_bytes: int = 32_000
    hard_output_bytes: int = 8_000_000  # past this the command is killed (endless output)


class Mount(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: Path
    dest: str
    writable: bool = False


class _Capture:
    """Reads a pipe to the end keeping head and tail; kills via `on_overflow` past the hard cap."""

    def __init__(self, limits: Limits, on_overflow) -> None:
        self.half = limits.output_bytes // 2
        self.hard = limits.hard_output_bytes
        self.on_overflow = on_overflow
        self.head = bytearray()
        self.tail = bytearray()
        self.total = 0
        self.overflowed = False

    def pump(self, pipe) -> None:
        while chunk := pipe.read1(65536):
            self.total += len(chunk)
            room = self.half - len(self.head)
            self.head += chunk[:max(room, 0)]
            self.tail = (self.tail + chunk[max(room, 0):])[-self.half:]
            if self.total > self.hard and not self.overflowed:
                self.overflowed = True
                self.on_overflow()

    def text(self) -> tuple[str, bool]:
        cut = self.total - len(self.head) - len(self.tail)
        head = self.head.decode(errors="replace")
        if cut <= 0:
            return head + self.tail.decode(errors="replace"), False
        marker = f"\n[... {cut} bytes of output cut ...]\n"
        return head + marker + self.tail.decode(errors="replace"), True


def _kill_group(proc: subprocess.Popen) -> None:
    # bwrap runs in its own session (start_new_session); its PID-namespace init dies with it
    # (--die-with-parent), which takes every process left in the namespace down too.
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


def run_capped(argv: list[str], *, stdin: str, timeout: float, limits: Limits,
               preexec, cwd: Path | None = None, env: dict | None = None) -> ExecResult:
    """Run argv in a new session with head/tail-capped output, killed as a group on timeout."""
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=preexec, start_new_session=True,
                            cwd=cwd, env=env)
    capture = _Capture(limits, lambda: _kill_group(proc))
    reader = threading.Thread(target=capture.pump, args=(proc.stdout,), daemon=True)
    reader.start()
    try:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the command did not read its input
    timed_out = False
    try:
        proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        timed_out = True
        _kill_group(proc)
        proc.wait()
    reader.join()
    output, truncated = capture.text()
    reason = "timeout" if timed_out else "output_cap" if capture.overflowed else (
        "killed" if proc.returncode < 0 else "exited")
    return ExecResult(exit_code=proc.returncode, output=output, timed_out=timed_out,
                      truncated=truncated or capture.overflowed, exit_reason=reason,
                      duration_ms=(time.monotonic() - start) * 1000)


def _rlimits(limits: Limits) -> list[tuple[int, int]]:
    return [(resource.RLIMIT_AS, limits.memory_mb << 20),
            (resource.RLIMIT_FSIZE, limits.fsize_mb << 20),
            (resource.RLIMIT_CORE, 0)]


def _system_binds() -> list[str]:
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.exists():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in _ETC:
        if (Path("/etc") / name).exists():
            args += ["--ro-bind", f"/etc/{name}", f"/etc/{name}"]
    return args


def _dirs_for(dest: str) -> list[str]:
    # bwrap makes a bind's missing parents 0700 for root; a dropped uid could not traverse them.
    parents = [str(p) for p in reversed(Path(dest).parents) if str(p) not in ("/", "/usr")]
    return [a for p in parents for a in ("--perms", "0755", "--dir", p)]


class BwrapSandbox:
    """One rollout's sandbox over a private copy of the task's files, used for many commands.

    As root the commands run as a fresh unprivileged uid (RLIMIT_NPROC does not apply to root,
    and a per-sandbox uid makes the process limit this sandbox's own)."""

    def __init__(self, app_dir: Path, *, harness_dir: Path | None = None,
                 allow_internet: bool = False, limits: Limits = Limits()) -> None:
        self.app_dir = Path(app_dir)
        self.harness_dir = harness_dir
        self.allow_internet = allow_internet
        self.limits = limits
        self.uid = random.randrange(10**6, 10**9) if os.geteuid() == 0 else os.getuid()
        self._chown(self.app_dir)

    @classmethod
    def for_task(cls, task: Task, *, harness_dir: Path | None = None,
                 limits: Limits | None = None) -> "BwrapSandbox":
        """A fresh copy of the task's environment/ (minus the Dockerfile) as /app."""
        env = task.config.environment
        return cls(copy_task_files(task), harness_dir=harness_dir,
                   allow_internet=env.allow_internet,
                   limits=limits or Limits(memory_mb=env.memory_mb))

    def _chown(self, path: Path) -> None:
        if os.geteuid() != 0:
            return
        for root, dirs, files in os.walk(path):
            for name in [root, *(os.path.join(root, n) for n in dirs + files)]:
                os.lchown(name, self.uid, self.uid)

    def writable_dir(self, name: str) -> Path:
        """A fresh host directory the sandbox's user may write (e.g. /logs/verifier)."""
        path = Path(tempfile.mkdtemp(prefix=f"evo-{name}-"))
        self._chown(path)
        return path

    def _argv(self, command: list[str], mounts: list[Mount]) -> list[str]:
        python_dirs = sorted({sys.prefix, sys.base_prefix})
        # /tmp first: the Python and the mounts may live under the host's /tmp (a CI checkout),
        # and a tmpfs mounted after them would hide them.
        args = ["bwrap", *_system_binds(), "--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--tmpfs", "/tmp"]
        for path in python_dirs:
            args += [*_dirs_for(path), "--ro-bind", path, path]
        all_mounts = [Mount(source=self.app_dir, dest=APP, writable=True), *mounts]
        if self.harness_dir is not None:
            all_mounts.append(Mount(source=self.harness_dir, dest=HARNESS))
        for m in all_mounts:
            args += [*_dirs_for(m.dest), "--bind" if m.writable else "--ro-bind",
                     str(m.source), m.dest]
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
                 "--hostname", "sandbox", "--die-with-parent", "--new-session", "--chdir", APP,
                 "--clearenv", "--setenv", "HOME", "/tmp", "--setenv", "LANG", "C.UTF-8",
                 "--setenv", "PATH", f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin"]
        if not self.allow_internet:
            args.append("--unshare-net")
        if os.geteuid() == 0:
            return args + ["--", "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                           "--clear-groups", "--no-new-privs", "--bounding-set=-all",
                           "--inh-caps=-all", "--", *command]
        return args + ["--unshare-user", "--", *command]

    def _preexec(self):
        limits = _rlimits(self.limits)
        nproc = self.limits.nproc
        if os.geteuid() != 0:
            # Without a private uid the count covers all of the user's processes.
            nproc += sum(1 for p in psutil.process_iter(["uids"]) if p.info["uids"].real == self.uid)

        def apply() -> None:
            for kind, value in [*limits, (resource.RLIMIT_NPROC, nproc)]:
                resource.setrlimit(kind, (value, value))
        return apply

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None) -> ExecResult:
        """Run `bash -c command` in /app; extra mounts (e.g. /tests) only for this command."""
        return self._run(["bash", "-c", command], stdin, timeout, mounts or [])

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """Run a harness script (relative to the harness dir) with python3, cwd /app."""
        return self._run(["python3", f"{HARNESS}/{script}"], stdin, timeout, [])

    def _run(self, command: list[str], stdin: str, timeout: float, mounts: list[Mount]) -> ExecResult:
        result = run_capped(self._argv(command, mounts), stdin=stdin, timeout=timeout,
                            limits=self.limits, preexec=self._preexec())
        self.kill_leftovers()
        if result.exit_reason == "exited" and result.output.startswith("bwrap: "):
            return result.model_copy(update={"exit_reason": "sandbox_error"})
        return result

    def kill_leftovers(self) -> int:
        """Kill any process still running as this sandbox's private uid; returns how many.

        A command's PID namespace dies with it, but the kernel tears it down asynchronously: this
        also waits for the last of a fork bomb's processes to go."""
        if os.geteuid() != 0:
            return 0
        found = [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == self.uid]
        for proc in found:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(found, timeout=5)
        return len(found)

    def close(self) -> None:
        """Kill what is left and delete the sandbox's files."""
        self.kill_leftovers()
        shutil.rmtree(self.app_dir, ignore_errors=True)


def copy_task_files(task: Task) -> Path:
    """A private writable copy of environment/ without the Dockerfile: the task's /app."""
    app = Path(tempfile.mkdtemp(prefix=f"evo-app-{task.id}-"))
    if task.environment_dir.is_dir():
        shutil.copytree(task.environment_dir, app, dirs_exist_ok=True, symlinks=True,
                        ignore=shutil.ignore_patterns("Dockerfile", ".dockerignore"))
    return app
