"""Resource limits of one sandbox: the task's memory, process count and CPUs through a cgroup of
its own (v1 or v2, when this process may create one), rlimits for each command, the disk used
under writable directories that no volume caps (measured by the sandbox's watchdog). The sandbox
applies them; /app's own filesystem, where there is one, is volume.py's."""
from __future__ import annotations

import math
import os
import resource
import signal
import stat
import time
import uuid
from collections.abc import Callable
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

CGROUP_ROOT = Path("/sys/fs/cgroup")
CPU_PERIOD_US = 100_000


class Limits(BaseModel):
    """Per-sandbox limits; output beyond `output_bytes` keeps head and tail only."""

    model_config = ConfigDict(frozen=True)

    nproc: int = 256
    memory_mb: int = 2048  # all of the sandbox's processes and its /tmp together (cgroup)
    fsize_mb: int = 256  # one file
    storage_mb: int = 10240  # everything under /app: its volume's size, else the watchdog's cap
    max_files: int = 200_000  # entries under /app: a million empty files fill a disk's inodes
    cpus: float = 1.0
    output_bytes: int = 32_000
    hard_output_bytes: int = 8_000_000  # past this the command is killed (endless output)


def rlimits(limits: Limits) -> list[tuple[int, int]]:
    """Per-process limits: address space, one file's size (never above the disk cap), no cores."""
    fsize = min(limits.fsize_mb, limits.storage_mb) << 20
    return [(resource.RLIMIT_AS, limits.memory_mb << 20), (resource.RLIMIT_FSIZE, fsize),
            (resource.RLIMIT_CORE, 0)]


def cpu_set(cpus: float) -> set[int]:
    """The first ceil(cpus) CPUs this process may use: the fallback when no cgroup caps CPU time."""
    allowed = sorted(os.sched_getaffinity(0))
    return set(allowed[:max(1, math.ceil(cpus))])


def _write(path: Path, value: str) -> None:
    with open(path, "w") as handle:
        handle.write(value)


def kill_until_gone(pids: Callable[[], set[int]], patience: float) -> int:
    """SIGKILL the processes `pids` names, again and again until it names none (or `patience`
    seconds run out); how many were killed."""
    killed: set[int] = set()
    deadline = time.monotonic() + patience
    while (found := pids()) and time.monotonic() < deadline:
        for pid in found:
            try:
                os.kill(pid, signal.SIGKILL)
                killed.add(pid)
            except ProcessLookupError:
                pass
        time.sleep(0.02)  # the kernel tears processes down asynchronously
    return len(killed)


def oom_kill_count(events: Path) -> int:
    """The `oom_kill N` count of a memory cgroup's memory.events (v2) or memory.oom_control (v1)."""
    for line in events.read_text().splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    return 0


class Cgroup:
    """A cgroup per sandbox capping memory (its tmpfs pages included), processes and CPU time.

    cgroup v2 when the unified hierarchy has the memory controller, else v1's memory, pids and cpu
    hierarchies. `create` returns None where this process may not make one (not root, or a
    read-only /sys/fs/cgroup): the README says what is then left."""

    def __init__(self, dirs: dict[str, Path], v2: bool) -> None:
        self.dirs = dirs  # controller -> directory ("unified" for v2)
        self.v2 = v2

    @classmethod
    def create(cls, limits: Limits) -> "Cgroup | None":
        name = f"evo-{uuid.uuid4().hex[:12]}"
        try:
            group = cls._make_v2(name) if _has_v2_memory() else cls._make_v1(name)
        except OSError:
            return None
        if group is None:
            return None
        try:
            group._apply(limits)
        except OSError:
            group.remove()
            return None
        return group

    @classmethod
    def _make_v2(cls, name: str) -> "Cgroup":
        parent = CGROUP_ROOT / "evoharness"
        parent.mkdir(exist_ok=True)
        for level in (CGROUP_ROOT, parent):
            _write(level / "cgroup.subtree_control", "+memory +pids +cpu")
        (parent / name).mkdir()
        return cls({"unified": parent / name}, v2=True)

    @classmethod
    def _make_v1(cls, name: str) -> "Cgroup | None":
        if not (CGROUP_ROOT / "memory" / "memory.limit_in_bytes").exists():
            return None
        dirs = {}
        for controller in ("memory", "pids", "cpu"):
            if (CGROUP_ROOT / controller / "cgroup.procs").exists():
                path = CGROUP_ROOT / controller / "evoharness" / name
                path.mkdir(parents=True)
                dirs[controller] = path
        return cls(dirs, v2=False)

    def _apply(self, limits: Limits) -> None:
        memory = str(limits.memory_mb << 20)
        quota = str(max(1000, int(limits.cpus * CPU_PERIOD_US)))
        if self.v2:
            d = self.dirs["unified"]
            _write(d / "memory.max", memory)
            if (d / "memory.swap.max").exists():
                _write(d / "memory.swap.max", "0")
            _write(d / "pids.max", str(limits.nproc))
            _write(d / "cpu.max", f"{quota} {CPU_PERIOD_US}")
            return
        _write(self.dirs["memory"] / "memory.limit_in_bytes", memory)
        if (swap := self.dirs["memory"] / "memory.memsw.limit_in_bytes").exists():
            _write(swap, memory)
        if "pids" in self.dirs:
            _write(self.dirs["pids"] / "pids.max", str(limits.nproc))
        if "cpu" in self.dirs:
            _write(self.dirs["cpu"] / "cpu.cfs_period_us", str(CPU_PERIOD_US))
            _write(self.dirs["cpu"] / "cpu.cfs_quota_us", quota)

    @property
    def caps_cpu(self) -> bool:
        return self.v2 or "cpu" in self.dirs

    def join(self) -> None:
        """Move the calling process in (run in the child between fork and exec)."""
        pid = str(os.getpid())
        for path in self.dirs.values():
            _write(path / "cgroup.procs", pid)

    def pids(self) -> set[int]:
        found: set[int] = set()
        for path in self.dirs.values():
            try:
                found |= {int(p) for p in (path / "cgroup.procs").read_text().split()}
            except OSError:
                continue
        return found

    def oom_kills(self) -> int:
        """How many processes the kernel killed for going over the memory cap so far."""
        return oom_kill_count(self.dirs["unified"] / "memory.events" if self.v2
                              else self.dirs["memory"] / "memory.oom_control")

    def kill_all(self, patience: float = 10.0) -> int:
        """SIGKILL every process in the cgroup until none is left (or `patience` runs out)."""
        return kill_until_gone(self.pids, patience)

    def remove(self) -> bool:
        """Kill what is in the cgroup and delete it; False when a process outlived the kill."""
        self.kill_all()
        emptied = not self.pids()
        for path in self.dirs.values():
            try:
                path.rmdir()
            except OSError:
                pass  # still busy after the patience above: the kernel frees it when empty
        return emptied


def _has_v2_memory() -> bool:
    controllers = CGROUP_ROOT / "cgroup.controllers"
    return controllers.exists() and "memory" in controllers.read_text().split()


def disk_usage(paths: list[Path], max_files: int, holder: int | None = None,
               holders: set[int] | None = None, devices: set[int] = frozenset()
               ) -> tuple[int, int]:
    """(bytes, entries) under `paths`, links not followed, at any depth; a sparse file counts at
    its full size (a copy of it would be). Stops counting past `max_files` entries. With
    `holder` (a process id), adds the deleted files on those filesystems that it or any of its
    descendants still holds open, or mapped (as root), which no walk can see; `holders` names
    those processes instead (a container's, which are not the host command's children)."""
    total, count = 0, 0
    for path in paths:
        used, seen = _tree_usage(str(path), max_files - count)
        total, count = total + used, count + seen
    if holder is not None or holders:
        total += _held_deleted(holder, {_device(p) for p in paths} - {None} | devices, holders)
    return total, count


_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC


def _tree_usage(top: str, budget: int) -> tuple[int, int]:
    """One tree, walked by directory descriptors (no path longer than a name is ever used, so
    depth past PATH_MAX hides nothing) with one descriptor open at a time: the walk climbs back
    by '..' and stops where '..' is not the directory it came from (moved while it looked)."""
    try:
        fd = os.open(top, _DIR_FLAGS)
    except OSError:
        return 0, 0  # vanished or unreadable: the next look will see
    total, count, subdirs = _list(fd)
    stack = [(_identity(fd), subdirs)]  # per level: the directory, its subdirectories left
    try:
        while stack and count <= budget:
            if not stack[-1][1]:
                stack.pop()
                if stack and (fd := _climb(fd, stack[-1][0])) < 0:
                    break
                continue
            try:
                child = os.open(stack[-1][1].pop(), _DIR_FLAGS, dir_fd=fd)
            except OSError:
                continue
            os.close(fd)
            fd = child
            used, seen, subdirs = _list(fd)
            total, count = total + used, count + seen
            stack.append((_identity(fd), subdirs))
    finally:
        if fd >= 0:
            os.close(fd)
    return total, count


def _identity(fd: int) -> tuple[int, int]:
    info = os.fstat(fd)
    return info.st_dev, info.st_ino


def _climb(fd: int, parent: tuple[int, int]) -> int:
    """`fd`'s parent (`fd` closed), or -1 when it is no longer `parent`."""
    try:
        up = os.open("..", _DIR_FLAGS, dir_fd=fd)
    except OSError:
        up = -1
    os.close(fd)
    if up >= 0 and _identity(up) != parent:
        os.close(up)
        return -1
    return up


def _list(fd: int) -> tuple[int, int, list[str]]:
    """(bytes, entries, names of subdirectories) of one directory."""
    total, count, subdirs = 0, 0, []
    try:
        with os.scandir(fd) as entries:
            for entry in entries:
                count += 1
                try:
                    info = entry.stat(follow_symlinks=False)
                except OSError:
                    continue
                total += max(info.st_size, info.st_blocks * 512)
                if stat.S_ISDIR(info.st_mode):
                    subdirs.append(entry.name)
    except OSError:
        pass
    return total, count, subdirs


def _device(path: Path) -> int | None:
    try:
        return os.stat(path).st_dev
    except OSError:
        return None


def _held_deleted(holder: int | None, devices: set[int], holders: set[int] | None = None) -> int:
    """Bytes of deleted regular files on `devices` that `holder` or its descendants hold through
    a descriptor, or a mapping (readable as root only). What a process hides from the host (not
    dumpable, when the host is not root) or has in flight on a socket is not seen."""
    pids = list(holders or [])
    if holder is not None and not holders:
        try:
            root = psutil.Process(holder)
            pids = [holder, *(p.pid for p in root.children(recursive=True))]
        except psutil.Error:
            return 0
    held: dict[tuple[int, int], int] = {}
    for pid in pids:
        for link in _deleted_links(pid):
            try:
                info = os.stat(link)
            except OSError:
                continue
            if info.st_dev in devices and stat.S_ISREG(info.st_mode):
                held[(info.st_dev, info.st_ino)] = max(info.st_size, info.st_blocks * 512)
    return sum(held.values())


def _deleted_links(pid: int) -> list[str]:
    """/proc links to the deleted files process `pid` has open or mapped."""
    links = []
    for folder in (f"/proc/{pid}/fd", f"/proc/{pid}/map_files"):
        try:
            names = os.listdir(folder)
        except OSError:
            continue
        for name in names:
            try:
                if os.readlink(f"{folder}/{name}").endswith(" (deleted)"):
                    links.append(f"{folder}/{name}")
            except OSError:
                continue
    return links


def disk_watchdog(paths: list[Path], limits: Limits,
                  pids: Callable[[], set[int]] | None = None,
                  devices: set[int] = frozenset()) -> Callable[[int], str] | None:
    """A check, given a command's pid, that says "disk_limit" once `paths` hold more than the
    storage cap or the file-count cap (counting files its processes hold open after deleting
    them) and have grown since it was made (a command that frees space is left alone); None for
    no paths. `pids` gives the processes to look in instead of the command's own tree (a
    container's, which run under the engine, not under its client), and `devices` the other
    filesystems whose deleted files count (a container's root, an overlay over `paths`)."""
    if not paths:
        return None
    cap, most = limits.storage_mb << 20, limits.max_files
    start_bytes, start_files = disk_usage(paths, most)

    def check(pid: int) -> str:
        used, files = disk_usage(paths, most, holder=pid, holders=pids() if pids else None,
                                 devices=devices)
        grew = (used > cap and used > start_bytes) or (files > most and files > start_files)
        return "disk_limit" if grew else ""
    return check
