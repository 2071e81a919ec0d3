"""Atomic file writes: a reader never sees half a file (temporary file, fsync, rename)."""
from __future__ import annotations

import os
import tempfile
from pathlib import Path

from pydantic import BaseModel


def write_atomic(path: str | Path, data: str | bytes) -> Path:
    """Write `data` to `path` so that the file is either the old one or the whole new one."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    raw = data.encode() if isinstance(data, str) else data
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(raw)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
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
