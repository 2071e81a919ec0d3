"""Reading the reward file the verifier left in /logs/verifier, as the host: whatever code ran in
the sandbox may have put there (a link, a FIFO, a directory, a huge or sparse file), it is opened
without following links or blocking, read to a small bound, and its bytes never echoed."""
from __future__ import annotations

import errno
import json
import math
import os
import stat
from pathlib import Path

MAX_REWARD_BYTES = 4096  # a number, or a small JSON object of named rewards


class RewardUnreadable(Exception):
    """Why there is no reward; the message never holds the file's content."""


def _read_bounded(directory_fd: int, name: str) -> bytes | None:
    """The file's bytes, None if absent; refuses anything but a small regular file."""
    flags = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY | os.O_CLOEXEC
    try:
        fd = os.open(name, flags, dir_fd=directory_fd)
    except FileNotFoundError:
        return None
    except OSError as error:
        if error.errno == errno.ELOOP:
            raise RewardUnreadable(f"{name} is a symbolic link, not a file") from None
        reason = errno.errorcode.get(error.errno)
        raise RewardUnreadable(f"{name} cannot be opened ({reason})") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise RewardUnreadable(f"{name} is not a regular file")
        if info.st_nlink != 1:
            raise RewardUnreadable(f"{name} has other hard links")
        if info.st_size > MAX_REWARD_BYTES:
            raise RewardUnreadable(f"{name} is {info.st_size} bytes, more than {MAX_REWARD_BYTES}")
        data = os.read(fd, MAX_REWARD_BYTES + 1)  # the size may have changed since fstat
        if len(data) > MAX_REWARD_BYTES:
            raise RewardUnreadable(f"{name} grew past {MAX_REWARD_BYTES} bytes while read")
        return data
    finally:
        os.close(fd)


def _finite(value: object, name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        raise RewardUnreadable(f"{name} does not hold a number")
    try:
        number = float(value)
    except ValueError:
        raise RewardUnreadable(f"{name} does not hold a number") from None
    if not math.isfinite(number):
        raise RewardUnreadable(f"{name} holds a number that is not finite")
    return number


def _from_json(data: bytes) -> float:
    try:
        parsed = json.loads(data)
    except (ValueError, RecursionError):
        raise RewardUnreadable("reward.json is not valid JSON") from None
    value = parsed.get("reward") if isinstance(parsed, dict) else parsed
    return _finite(value, "reward.json's reward")


def read_reward(logs: Path) -> tuple[float | None, str]:
    """The reward from reward.txt (a number) or reward.json ({"reward": x, ...}); None when there is
    none or it cannot be read, with the reason (which never quotes the file)."""
    try:
        directory = os.open(logs, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC)
    except OSError:
        return None, "the reward directory is gone or is not a directory"
    try:
        text = _read_bounded(directory, "reward.txt")
        if text is not None:
            return _finite(text.decode("ascii", errors="replace").strip(), "reward.txt"), ""
        data = _read_bounded(directory, "reward.json")
        if data is not None:
            return _from_json(data), ""
    except RewardUnreadable as error:
        return None, f"unreadable reward file: {error}"
    finally:
        os.close(directory)
    return None, "no reward file written to /logs/verifier"
