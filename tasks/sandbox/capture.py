"""Running one command as a host process group: head/tail-capped output, a wall-clock timeout, a
watchdog polled while it runs, and a group kill for all three. What the command is (a bwrap
sandbox, a plain host process) is its caller's business."""
from __future__ import annotations

import os
import select
import signal
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

from evoharness.agent.environment import ExecResult
from evoharness.tasks.sandbox.limits import Limits

WATCH_SECONDS = 1.0  # how often the watchdog looks (e.g. at the disk the command fills)


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


@dataclass
class Hooks:
    """Optional parts of a run: fds the child keeps, a step once it started (e.g. attach its
    network), and a watchdog given the child's pid, returning a reason to kill it (e.g.
    "disk_limit") or ""."""

    pass_fds: tuple[int, ...] = ()
    started: Callable[[], None] | None = None
    watchdog: Callable[[int], str] | None = None
    env: dict[str, str] = field(default_factory=lambda: {"PATH": "/usr/bin:/bin"})


def _wait(proc: subprocess.Popen, timeout: float, watchdog: Callable[[int], str] | None) -> str:
    """'' when the process ended by itself, else why it was killed."""
    deadline = time.monotonic() + timeout
    with _exit_notice(proc) as ended:
        while True:
            left = deadline - time.monotonic()
            if ended(max(0.0, min(left, WATCH_SECONDS if watchdog else left))):
                proc.wait()
                return ""
            reason = ("timeout" if time.monotonic() >= deadline
                      else watchdog(proc.pid) if watchdog else "")
            if reason:
                _kill_group(proc)
                proc.wait()
                return reason


@contextmanager
def _exit_notice(proc: subprocess.Popen) -> Iterator[Callable[[float], bool]]:
    """A wait of at most some seconds for `proc` to end: whether it did. Through a pidfd, which
    the kernel makes readable the moment the process exits. Popen.wait(timeout) polls instead,
    sleeping up to 50 ms between looks, so a command's end was seen up to 50 ms late."""
    try:
        fd = os.pidfd_open(proc.pid)
    except (AttributeError, OSError):  # no pidfds here (Linux before 5.3), or it was reaped
        def polled(seconds: float) -> bool:
            try:
                proc.wait(timeout=seconds)
                return True
            except subprocess.TimeoutExpired:
                return False
        yield polled
        return
    try:
        yield lambda seconds: bool(select.select([fd], [], [], seconds)[0])
    finally:
        os.close(fd)


def run_capped(argv: list[str], *, stdin: str, timeout: float, limits: Limits,
               preexec, cwd=None, hooks: Hooks | None = None) -> ExecResult:
    """Run argv in a new session with head/tail-capped output, killed as a group on timeout or
    when the watchdog says so. The process starts with `hooks.env` only (no inherited secrets)."""
    hooks = hooks or Hooks()
    start = time.monotonic()
    proc = subprocess.Popen(argv, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            stderr=subprocess.STDOUT, preexec_fn=preexec, start_new_session=True,
                            cwd=cwd, env=hooks.env, pass_fds=hooks.pass_fds)
    capture = _Capture(limits, lambda: _kill_group(proc))
    reader = threading.Thread(target=capture.pump, args=(proc.stdout,), daemon=True)
    reader.start()
    killed_for = ""
    try:
        if hooks.started is not None:
            hooks.started()
    except OSError as error:
        _kill_group(proc)
        proc.wait()
        killed_for = f"sandbox_error: {error}"
    try:
        proc.stdin.write(stdin.encode())
        proc.stdin.close()
    except BrokenPipeError:
        pass  # the command did not read its input
    killed_for = killed_for or _wait(proc, timeout, hooks.watchdog)
    reader.join()
    output, truncated = capture.text()
    if killed_for.startswith("sandbox_error"):
        output, killed_for = f"{killed_for}\n{output}", "sandbox_error"
    reason = killed_for or ("output_cap" if capture.overflowed else
                            "killed" if proc.returncode < 0 else "exited")
    return ExecResult(exit_code=proc.returncode, output=output, timed_out=reason == "timeout",
                      truncated=truncated or capture.overflowed, exit_reason=reason,
                      duration_ms=(time.monotonic() - start) * 1000)
