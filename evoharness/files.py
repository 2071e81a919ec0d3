"""Atomic file writes: a reader never sees half a file (temporary file, fsync, rename), and the new
file gets the mode a plain open() would give it (0666 less the umask)."""
from __future__ import annotations

import os
import secrets
from pathlib import Path

from pydantic import BaseModel

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
