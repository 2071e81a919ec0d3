"""Writing an untrusted tar stream (an image's export) under a host directory, as root, with no
right the archive could steer: every path is opened component by component without following a
link, so nothing is written, chowned or chmodded outside the directory or through a link; only
directories, regular files, symbolic links (stored, never followed) and hard links to a regular
file this unpack wrote are made; devices, FIFOs and sockets are dropped; set-id bits are dropped;
and the files' sizes (as they claim them: a sparse file counts at its full size, a hard link once)
may not pass a byte cap. Which members to take, and under what name, is the caller's."""
from __future__ import annotations

import errno
import os
import stat
import tarfile
from dataclasses import dataclass, field

from evoharness.errors import EvoError

_DIR = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_NEW = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
_CHUNK = 1 << 20


class TooLarge(EvoError):
    """The archive's files add up to more than the cap."""


@dataclass
class Unpacked:
    """What an unpack made and left out."""

    bytes: int = 0
    dropped: list[str] = field(default_factory=list)  # names of the members not made, and why
    files: set[str] = field(default_factory=set)  # regular files made: hard links may name them
    dirs: list[tuple[str, tarfile.TarInfo]] = field(default_factory=list)  # modes set at the end


def safe_parts(name: str) -> list[str] | None:
    """The path's components, or None when it is absolute, empty or climbs with '..'."""
    parts = [p for p in name.split("/") if p not in ("", ".")]
    if not parts or name.startswith("/") or ".." in parts:
        return None
    return parts


class Unpacker:
    """Makes members under `root` (an existing directory) within `cap` bytes and
    `most_entries` entries."""

    def __init__(self, root: str, cap: int, most_entries: int, *,
                 owners: bool | None = None) -> None:
        self.root = root
        self.cap = cap
        self.most_entries = most_entries
        self.entries = 0
        self.owners = os.geteuid() == 0 if owners is None else owners
        self.done = Unpacked()

    def add(self, archive: tarfile.TarFile, member: tarfile.TarInfo, name: str) -> None:
        """Make `member` at `name` (relative to root); what cannot be made safely is dropped."""
        parts = safe_parts(name)
        if parts is None:
            return self._drop(name, "an unsafe name")
        self.entries += 1
        if self.entries > self.most_entries:
            raise TooLarge(f"the image's files are more than {self.most_entries} entries")
        try:
            parent = self._open_parent(parts[:-1])
        except OSError as error:
            return self._drop(name, f"its directory cannot be used ({error.strerror})")
        try:
            self._make(archive, member, parent, parts)
        except OSError as error:
            self._drop(name, error.strerror or str(error))
        finally:
            os.close(parent)

    def finish(self) -> Unpacked:
        """Set the directories' owners, modes and times (last, deepest first: a read-only
        directory would refuse its children)."""
        for name, member in sorted(self.done.dirs, key=lambda d: -d[0].count("/")):
            parts = safe_parts(name) or []
            try:
                fd = self._open_parent(parts)
            except OSError:
                continue
            try:
                self._attributes(fd, member)
            finally:
                os.close(fd)
        return self.done

    def _drop(self, name: str, why: str) -> None:
        self.done.dropped.append(f"{name}: {why}")

    def _open_parent(self, parts: list[str]) -> int:
        """The directory `parts` under root, made (0755) where missing, never through a link."""
        fd = os.open(self.root, _DIR)
        try:
            for part in parts:
                try:
                    os.mkdir(part, 0o755, dir_fd=fd)
                except FileExistsError:
                    pass
                child = os.open(part, _DIR, dir_fd=fd)
                os.close(fd)
                fd = child
        except OSError:
            os.close(fd)
            raise
        return fd

    def _make(self, archive, member: tarfile.TarInfo, parent: int, parts: list[str]) -> None:
        leaf, rel = parts[-1], "/".join(parts)
        if member.isdir():
            self._clear(parent, leaf, keep_dir=True)
            try:
                os.mkdir(leaf, 0o700, dir_fd=parent)
            except FileExistsError:
                pass
            self.done.dirs.append((rel, member))
        elif member.isreg():
            self._file(archive, member, parent, leaf, rel)
        elif member.issym():
            self._clear(parent, leaf)
            os.symlink(member.linkname, leaf, dir_fd=parent)
            if self.owners:
                os.chown(leaf, member.uid, member.gid, dir_fd=parent, follow_symlinks=False)
        elif member.islnk():
            self._hard_link(member, parent, leaf)
        else:
            self._drop(rel, "not a file, directory or link (a device, FIFO or socket)")

    def _file(self, archive, member: tarfile.TarInfo, parent: int, leaf: str, rel: str) -> None:
        if self.done.bytes + member.size > self.cap:
            raise TooLarge(f"the image's files hold more than {self.cap >> 20} MB "
                           f"({rel} alone claims {member.size} bytes)")
        self.done.bytes += member.size
        self._clear(parent, leaf)
        fd = os.open(leaf, _NEW, 0o600, dir_fd=parent)
        try:
            self._copy(archive.extractfile(member), fd, member.size)
            self._attributes(fd, member)
        finally:
            os.close(fd)
        self.done.files.add(rel)

    @staticmethod
    def _copy(source, fd: int, size: int) -> None:
        """The content, with runs of zeros left as holes (a sparse file stays sparse)."""
        left = size
        while left > 0:
            chunk = source.read(min(_CHUNK, left)) if source else b""
            if not chunk:
                break
            left -= len(chunk)
            if chunk.count(0) == len(chunk):
                os.lseek(fd, len(chunk), os.SEEK_CUR)
            else:
                os.write(fd, chunk)
        os.ftruncate(fd, size - left)

    def _hard_link(self, member: tarfile.TarInfo, parent: int, leaf: str) -> None:
        """Only to a regular file this unpack made (never to a link, a directory, or a path
        outside): the target's inode already has its owner and mode."""
        target = safe_parts(member.linkname)
        name = "/".join(target or [])
        if target is None or name not in self.done.files:
            raise OSError(errno.EPERM, "a hard link to something that is not a file unpacked here")
        source = self._open_parent(target[:-1])
        try:
            info = os.stat(target[-1], dir_fd=source, follow_symlinks=False)
            if not stat.S_ISREG(info.st_mode):
                raise OSError(errno.EPERM, "a hard link to something that is not a regular file")
            self._clear(parent, leaf)
            os.link(target[-1], leaf, src_dir_fd=source, dst_dir_fd=parent, follow_symlinks=False)
        finally:
            os.close(source)

    def _clear(self, parent: int, leaf: str, keep_dir: bool = False) -> None:
        """Remove an entry already at `leaf` (a later member of the same name replaces it)."""
        try:
            info = os.stat(leaf, dir_fd=parent, follow_symlinks=False)
        except FileNotFoundError:
            return
        if stat.S_ISDIR(info.st_mode):
            if keep_dir:
                return
            raise OSError(errno.EEXIST, "a directory is already there")
        os.unlink(leaf, dir_fd=parent)

    def _attributes(self, fd: int, member: tarfile.TarInfo) -> None:
        """Owner, mode (set-id bits dropped) and times, on the open descriptor: never a path."""
        if self.owners:
            os.fchown(fd, member.uid, member.gid)
        os.fchmod(fd, member.mode & 0o1777)
        os.utime(fd, (member.mtime, member.mtime))
