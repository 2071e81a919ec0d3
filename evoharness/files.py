"""Atomic file writes: a reader never sees half a file (temporary file, fsync, rename), and the new
file gets the mode a plain open() would give it (0666 less the umask). Reading agent-written files
without following links: read_inside."""
from __future__ import annotations

import errno
import os
import secrets
import stat
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from evoharness.errors import EvoError

# What open() would ask for: the kernel applies the process umask, so a harness file written here
# is as readable as one git checks out (a sandbox running as another uid must read it).
NEW_FILE_MODE = 0o666


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write `data` to `path` so that the file is either the old one or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    tmp = path.with_name(f".{path.name}.{secrets.token_hex(8)}.tmp")
    # O_EXCL and O_NOFOLLOW: never write through a file or link someone else put at that name.
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    fd = os.open(tmp, flags, NEW_FILE_MODE)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    dir_fd = os.open(path.parent, os.O_RDONLY)
    try:
        os.fsync(dir_fd)
    finally:
        os.close(dir_fd)
    return path


def write_model(path: str | Path, model: BaseModel) -> Path:
    """Serialise a pydantic record to JSON on disk, atomically."""
    return write_atomic(path, model.model_dump_json(indent=2))


# Reading what an agent or a task's author wrote (a harness, a task, files left in /app): every
# component of the path is opened with O_NOFOLLOW below the root the caller names, so a link never
# makes the host read (and an error quote) a file elsewhere, and a FIFO never blocks the read.
_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC


class FileMissing(EvoError):
    """read_inside's refusal when nothing is at the path (a folder on the way, or the file)."""


def read_inside(root: str | Path, rel: str | PurePosixPath, *, limit: int,
                name: str | Path | None = None) -> bytes:
    """The bytes of the regular file `rel` under `root`, at most `limit` of them. Raises EvoError
    naming the file (`name`, else `rel`) and never quoting what is there, for a path that leaves
    `root`, a link anywhere on the way, a missing file, anything but a regular file, or one larger
    than `limit`. `root` itself is the caller's to trust (a folder the user named)."""
    shown = str(name if name is not None else rel)

    def refuse(message: str, hint: str | None = None, kind: type[EvoError] = EvoError
               ) -> EvoError:
        return kind(message, file=shown, field="(file)", hint=hint)

    parts = PurePosixPath(rel).parts
    if not parts or PurePosixPath(rel).is_absolute() or ".." in parts:
        raise refuse("path must stay inside its folder")
    try:
        fd = os.open(root, os.O_RDONLY | os.O_DIRECTORY | os.O_CLOEXEC)
    except OSError as error:
        raise refuse(f"its folder {root} cannot be opened ({error.strerror})") from None
    try:
        for index in range(len(parts)):
            where = "/".join(parts[:index + 1])
            last = index == len(parts) - 1
            opened = _open_at(fd, parts[index], _FILE_FLAGS if last else _DIR_FLAGS, where, refuse,
                              last)
            os.close(fd)
            fd = opened
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise refuse("is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            data = handle.read(limit + 1)  # the size may change while it is read
    finally:
        os.close(fd)
    if len(data) > limit:
        raise refuse(f"file is too large (more than {limit} bytes)")
    return data


def read_text_inside(root: str | Path, rel: str | PurePosixPath, *, limit: int,
                     name: str | Path | None = None) -> str:
    """read_inside as UTF-8 text; EvoError naming the file (not quoting it) if it is not."""
    try:
        return read_inside(root, rel, limit=limit, name=name).decode("utf-8")
    except UnicodeDecodeError as error:
        raise EvoError(f"file is not UTF-8 text (byte {error.start} is not)",
                       file=str(name if name is not None else rel), field="(file)") from None


def _open_at(dir_fd: int, part: str, flags: int, where: str, refuse, last: bool) -> int:
    try:
        return os.open(part, flags, dir_fd=dir_fd)
    except FileNotFoundError:
        missing = "file is missing" if last else f"file is missing (no folder {where})"
        raise refuse(missing, kind=FileMissing) from None
    except OSError as error:
        # O_DIRECTORY with O_NOFOLLOW on a link fails with ENOTDIR, not ELOOP.
        if error.errno == errno.ELOOP or _is_link(dir_fd, part):
            what = "is a symbolic link" if last else f"goes through a symbolic link ({where})"
            raise refuse(f"{what}; links are never followed",
                         "replace the link with a regular file") from None
        if error.errno == errno.ENOTDIR:
            raise refuse(f"{where} is not a folder") from None
        raise refuse(f"cannot be opened ({errno.errorcode.get(error.errno, error.errno)})") from None


def _is_link(dir_fd: int, part: str) -> bool:
    try:
        return stat.S_ISLNK(os.stat(part, dir_fd=dir_fd, follow_symlinks=False).st_mode)
    except OSError:
        return False
