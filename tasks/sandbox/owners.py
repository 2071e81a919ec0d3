"""Who owns what a sandbox leaves on the host (a loop-mounted /app volume, a container): a token
file this process holds an flock on for as long as it lives. A sweep removes a leftover only when
its owner's token can be locked, i.e. its owner is gone. Process ids cannot say that: a process in
another PID namespace (a test's Ray node under `unshare --pid`, a run inside a container) sees
other processes under the same numbers, or none, and would sweep what a live run still uses."""
from __future__ import annotations

import errno
import fcntl
import os
import re
import tempfile
import uuid
from pathlib import Path

_TOKEN = re.compile(r"[0-9a-f]{32}")
_held: dict[int, str] = {}  # pid -> this process's token (a forked child makes its own)
_fds: list[int] = []  # the locked token files, open for the process's lifetime


def owners_dir() -> Path:
    return Path(tempfile.gettempdir()) / "evo-owners"


def this_process() -> str:
    """This process's owner token, made and locked on first use."""
    pid = os.getpid()
    if pid not in _held:
        folder = owners_dir()
        folder.mkdir(mode=0o700, exist_ok=True)
        token = uuid.uuid4().hex
        fd = os.open(folder / token, os.O_RDWR | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o600)
        fcntl.flock(fd, fcntl.LOCK_EX)
        os.write(fd, b"held\n")  # written under the lock: an empty token is one being made
        _fds.append(fd)
        _held[pid] = token
    return _held[pid]


def alive(token: str) -> bool:
    """Whether the process holding `token` still runs. A token that is not one of ours, or one
    still being made, counts as alive: a sweep never removes what it cannot prove abandoned."""
    if not _TOKEN.fullmatch(token):
        return True
    path = owners_dir() / token
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except FileNotFoundError:
        return False  # its owner is gone and a sweep already removed the token
    except OSError:
        return True
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError as error:
        os.close(fd)
        if error.errno in (errno.EAGAIN, errno.EWOULDBLOCK):
            return True
        raise
    try:
        if not os.read(fd, 16):
            return True  # its owner is between making the file and locking it
        path.unlink(missing_ok=True)  # under the lock: no live owner can hold it any more
        return False
    finally:
        os.close(fd)
