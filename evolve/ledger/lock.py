"""The run lock: an flock on RUN/ledger/lock that the one process allowed to change a run (evolve,
run, rollback, traces rebuild) holds for its lifetime. The kernel drops it when that process dies,
even by SIGKILL, so a lock that can be taken is never stale; readers only look at it."""
from __future__ import annotations

import fcntl
import os
import time
from pathlib import Path

from evoharness.errors import EvoError

ACQUIRE_S = 5.0  # a reader's look holds the lock for microseconds; wait out a few of those


class RunBusy(EvoError):
    """Another process is changing this run."""


class RunLock:
    def __init__(self, path: Path) -> None:
        self.path = path
        self._fd: int | None = None

    def acquire(self, command: str) -> None:
        """Take the lock for `command` (e.g. "evolve"), or raise RunBusy naming its holder."""
        self.path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(self.path, os.O_RDWR | os.O_CREAT, 0o644)
        deadline = time.monotonic() + ACQUIRE_S
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() > deadline:
                    os.close(fd)
                    raise RunBusy(
                        "another evoharness process is changing this run", file=self.path,
                        value=holder(self.path),
                        hint=f"wait for it to finish (or stop it) before `{command}`; "
                             "status, manifest show, log, diff, report and traces sql work "
                             "meanwhile") from None
                time.sleep(0.05)
        os.ftruncate(fd, 0)
        os.pwrite(fd, f"evoharness {command} (pid {os.getpid()}, since "
                      f"{time.strftime('%Y-%m-%d %H:%M:%S')})\n".encode(), 0)
        self._fd = fd

    def release(self) -> None:
        if self._fd is not None:
            os.close(self._fd)  # closing the descriptor drops the flock
            self._fd = None


def holder(path: Path) -> str | None:
    """Who holds the run lock ("evoharness evolve (pid 123, since ...)"), or None if nobody."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except FileNotFoundError:
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
    except BlockingIOError:
        return Path(path).read_text().strip() or "another process"
    finally:
        os.close(fd)
    return None
