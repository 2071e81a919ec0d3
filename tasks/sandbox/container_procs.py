"""A running container seen from this host, never from inside it: whether its first process still
lives, the processes in its cgroup and whose they are, and how many its memory cgroup killed. The
host reads /proc and the cgroup files itself, so nothing of the image (a `cat` or `bash` on its
PATH, a binary it replaced) runs on the host's behalf. Starting containers is container.py's."""
from __future__ import annotations

import os
from pathlib import Path

from evoharness.tasks.sandbox.limits import kill_until_gone, oom_kill_count

CGROUP_ROOT = Path("/sys/fs/cgroup")
KILL_PATIENCE_S = 30.0


def _start_time(pid: int) -> str | None:
    if pid <= 0:
        return None
    try:
        stat = Path(f"/proc/{pid}/stat").read_text()
    except OSError:
        return None
    return stat.rsplit(")", 1)[-1].split()[19]  # field 22: start time, after the command name


def _cgroup_dirs(pid: int) -> dict[str, Path]:
    """The process's cgroup directory per controller ("unified" for v2), from /proc/PID/cgroup."""
    dirs: dict[str, Path] = {}
    try:
        lines = Path(f"/proc/{pid}/cgroup").read_text().splitlines() if pid > 0 else []
    except OSError:
        lines = []  # gone already: alive() says so
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controllers == "" and (CGROUP_ROOT / "cgroup.controllers").exists():
            dirs["unified"] = CGROUP_ROOT / path.lstrip("/")
        for name in controllers.split(","):
            if name in ("pids", "memory"):
                dirs[name] = CGROUP_ROOT / name / path.lstrip("/")
    return dirs


def _uids(pid: int) -> set[int]:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("Uid:"):
                return {int(u) for u in line.split()[1:]}
    except OSError:
        pass
    return set()


class ContainerProcs:
    """The container whose first process is `pid` on this host."""

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self.started = _start_time(pid)
        self.dirs = _cgroup_dirs(pid)

    def alive(self) -> bool:
        """Whether the container's first process still runs (the same process, not a reused
        number)."""
        return self.started is not None and _start_time(self.pid) == self.started

    def root_device(self) -> set[int]:
        """The device of the container's root filesystem as its processes see it (an overlay's
        own), where its deleted files live."""
        try:
            return {os.stat(f"/proc/{self.pid}/root").st_dev} if self.pid > 0 else set()
        except OSError:
            return set()

    def pids(self) -> set[int]:
        """Every process in the container's cgroup (and any below it)."""
        top = self.dirs.get("pids") or self.dirs.get("unified") or self.dirs.get("memory")
        found: set[int] = set()
        if top is None or not top.is_dir():
            return found
        for procs in [top / "cgroup.procs", *top.rglob("*/cgroup.procs")]:
            try:
                found |= {int(p) for p in procs.read_text().split()}
            except OSError:
                continue
        return found

    def kill_user(self, uid: int) -> int:
        """SIGKILL every process of `uid` in the container until none is left; how many."""
        return kill_until_gone(lambda: {p for p in self.pids() if uid in _uids(p)} - {self.pid},
                               KILL_PATIENCE_S)

    def oom_kills(self) -> int:
        """How many processes the container's memory cgroup killed so far."""
        for name, file in (("unified", "memory.events"), ("memory", "memory.oom_control")):
            try:
                return oom_kill_count(self.dirs[name] / file)
            except (KeyError, OSError):
                continue
        return 0
