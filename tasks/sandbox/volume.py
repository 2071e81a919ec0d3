"""A filesystem of its own for one sandbox's /app, as root: a sparse ext4 image under the host's
temporary directory, loop-mounted, with room for `storage_mb` of what the sandbox's user writes
(the task's files included) and `max_files` entries. The kernel counts every block and inode
allocated there, so a tree nested past PATH_MAX or a file deleted while still open holds its
space as any other, and a write past the cap fails with ENOSPC. Disk, not memory: a tmpfs /app
would count in the host's memory (its pages outlive each command's cgroup). Where no image can be
mounted (not root, no loop device) `create` gives None and the sandbox falls back on its watchdog
(limits.disk_usage). Leftovers of a killed process are swept by the next `create`."""
from __future__ import annotations

import functools
import logging
import math
import os
import shutil
import signal
import subprocess
import tempfile
from pathlib import Path

from evoharness.tasks.sandbox import owners
from evoharness.tasks.sandbox.limits import Limits

log = logging.getLogger(__name__)

PREFIX = "evo-vol-"
BLOCK = 4096
GROUP_BYTES = 128 << 20  # one ext4 block group at 4 KiB blocks: it holds at most 32,768 inodes
INODES_PER_GROUP = 8 * BLOCK
INODE_BYTES = 256
SLACK_BYTES = 64 << 20  # the filesystem's own metadata, never available to the sandbox
# No journal (a scratch filesystem has nothing to recover), no reserve for root (the reserve file
# below does that exactly), inode tables left for the kernel to treat as unused (the image is
# sparse: they read as zeros).
MKFS = ["mkfs.ext4", "-q", "-F", "-O", "^has_journal", "-m", "0", "-b", str(BLOCK),
        "-E", "lazy_itable_init=1,nodiscard"]
MOUNT_OPTIONS = "loop,nosuid,nodev,noatime,noinit_itable"
RESERVE = ".reserve"  # outside /app: blocks the host holds back so the user gets storage_mb
ENV = {"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"}


class VolumeError(OSError):
    """The host could not make, fill or remove a volume."""


def _run(argv: list[str]) -> str:
    done = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=300)
    if done.returncode != 0:
        why = (done.stderr or done.stdout).strip()[:300]
        raise VolumeError(f"{' '.join(argv[:2])} failed: {why}")
    return done.stdout


@functools.lru_cache(maxsize=None)
def _warn(why: str) -> None:
    """Once per reason: a machine that cannot mount one volume cannot mount the next either."""
    log.warning("no volume for /app (%s): the disk watchdog caps it instead", why)


class Volume:
    """One mounted image: `app` is the sandbox's /app; the rest of the mount is the host's."""

    def __init__(self, root: Path) -> None:
        self.root = root  # evo-vol-XXXX: the image, the owner file, the mount point
        self.image = root / "image"
        self.mount = root / "fs"
        self.app = self.mount / "app"
        self.storage_bytes = 0  # what the sandbox's user may allocate, the host's copies included
        self.empty_free = 0  # free bytes before the host copied anything in

    @classmethod
    def create(cls, limits: Limits, *, holds: tuple[int, int] = (0, 0)) -> Volume | None:
        """A mounted, empty volume with room for `holds` (bytes, entries) the host copies in
        before `seal`; None where this machine cannot mount one."""
        if os.geteuid() != 0 or shutil.which("mkfs.ext4", path=ENV["PATH"]) is None:
            return None
        sweep()
        root = Path(tempfile.mkdtemp(prefix=PREFIX))
        (root / "owner").write_text(owners.this_process())
        volume = cls(root)
        try:
            volume._make(limits, holds)
        except (OSError, subprocess.SubprocessError) as error:
            volume.close()
            _warn(str(error).replace(str(root), "VOLUME"))
            return None
        return volume

    def _make(self, limits: Limits, holds: tuple[int, int]) -> None:
        held_bytes, held_entries = holds
        inodes = limits.max_files + held_entries + 16
        data = (limits.storage_mb << 20) + held_bytes + held_entries * BLOCK
        size = max(data + inodes * INODE_BYTES + SLACK_BYTES,
                   (math.ceil(inodes / INODES_PER_GROUP) + 1) * GROUP_BYTES)
        with open(self.image, "wb") as handle:
            handle.truncate(math.ceil(size / BLOCK) * BLOCK)  # sparse: costs what is written
        _run([*MKFS, "-N", str(inodes), str(self.image)])
        self.mount.mkdir()
        _run(["mount", "-o", MOUNT_OPTIONS, str(self.image), str(self.mount)])
        self.app.mkdir()
        self.storage_bytes = limits.storage_mb << 20
        self.empty_free = self._free()

    def _free(self) -> int:
        info = os.statvfs(self.mount)
        return info.f_bavail * info.f_frsize

    def seal(self) -> None:
        """Hold back every block beyond `storage_mb` less what the host copied in, so that is all
        the sandbox's user can allocate (to within the few blocks the reserve's own extents use)."""
        used = self.empty_free - self._free()
        allowed = max(0, self.storage_bytes - used)
        fd = os.open(self.mount / RESERVE, os.O_WRONLY | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            size = 0
            for _ in range(3):  # the reserve's extents take blocks too: converge on `allowed`
                extra = (self._free() - allowed) // BLOCK * BLOCK
                if extra <= 0:
                    break
                os.posix_fallocate(fd, size, extra)
                size += extra
        finally:
            os.close(fd)

    def available(self) -> int:
        """Bytes the sandbox's user may still allocate."""
        return self._free()

    def close(self) -> None:
        """Unmount (lazily: the loop device goes with the last user) and delete the image."""
        _unmount(self.mount)
        shutil.rmtree(self.root, ignore_errors=True)


def _unmount(mount: Path) -> None:
    if os.path.ismount(mount):
        subprocess.run(["umount", "--lazy", str(mount)], capture_output=True, env=ENV, timeout=60)


def sweep() -> int:
    """Unmount and delete the volumes of processes that are gone (a run killed mid-rollout), and
    end any process still naming one; returns how many volumes. A live process's volumes, this
    one's included, are never touched."""
    swept = 0
    for root in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        if root.is_dir() and not root.is_symlink() and not _owner_alive(root):
            _kill_naming(root)
            _unmount(root / "fs")
            subprocess.run(["rm", "-rf", "--one-file-system", "--", str(root)],
                           capture_output=True, env=ENV, timeout=300)
            swept += 1
    return swept


def _kill_naming(root: Path) -> None:
    """SIGKILL each process whose command line names `root`: with its owner gone, only a
    sandbox left behind does. bubblewrap whose parent is killed during its start-up can wait
    forever for a child that is already dead (containers/bubblewrap#633)."""
    needle = os.fsencode(root) + b"/"
    for proc in Path("/proc").iterdir():
        if not proc.name.isdigit():
            continue
        try:
            if needle in (proc / "cmdline").read_bytes():
                os.kill(int(proc.name), signal.SIGKILL)
        except OSError:  # gone meanwhile, or not ours to read
            continue


def _owner_alive(root: Path) -> bool:
    """A root without its owner file yet is one being made: left alone (tasks/sandbox/owners.py)."""
    try:
        token = (root / "owner").read_text()
    except OSError:
        return True
    return owners.alive(token)
