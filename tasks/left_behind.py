"""What a rollout's agent left, for a reader who must never see its verdict (the exam's best-of-N
picker): its final summary and how /app differs from the task's starting files, captured after
the agent stopped and before the verifier ran (runner.py decides when). /app is hostile: it is
read without following a link, opening only regular files with one name, within bounds on
entries, depth, bytes and characters. Who reads it, and how, is evolve/'s."""
from __future__ import annotations

import os
import stat
import unicodedata
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evoharness.text import scrub

MAX_SUMMARY_CHARS = 1_000
MAX_FILES = 40  # changed files listed; the rest are counted
MAX_FILE_CHARS = 2_000  # of one file's text
MAX_TEXT_CHARS = 6_000  # of all files' text together
MAX_PATH_CHARS = 200
MAX_ENTRIES = 5_000  # directory entries visited in /app before the walk stops
MAX_DEPTH = 12
COMPARE_BYTES = 4 << 20  # a same-size file larger than this is compared by its mtime alone
# What sandbox.copy_task_files leaves out of /app: such a name in /app is the agent's.
NOT_COPIED = frozenset({"Dockerfile", ".dockerignore"})

Change = Literal["added", "changed", "deleted"]
Kind = Literal["text", "binary", "link", "special", "unreadable"]


class LeftFile(BaseModel):
    """One path of /app that differs from the task's start. `text`: the start of a text file,
    a link's target; empty for the rest."""

    model_config = ConfigDict(frozen=True)

    path: str
    change: Change
    kind: Kind = "text"
    size: int = 0
    text: str = ""
    cut: bool = False  # text holds only the start of the file


class LeftBehind(BaseModel):
    """The agent's final summary, how it ended, and the files of /app it added, changed or
    deleted (sorted by path, at most MAX_FILES listed)."""

    model_config = ConfigDict(frozen=True)

    summary: str = ""  # its `done` summary; empty when it never called done
    ended: str  # how the agent ended (done, max_steps, rollout_timeout...), known before any test
    files: list[LeftFile] = []
    more_files: int = 0  # differing files past MAX_FILES, not listed
    complete: bool = True  # False when the walk of /app stopped at a bound (deletions unknown)


def capture(environment_dir: Path, app_dir: Path, *, summary: str, ended: str,
            whole: bool = False) -> LeftBehind:
    """/app (`app_dir`) against the task's starting files (`environment_dir`, trusted: the
    task's environment/, or with `whole` a copy of its image's /app, every name kept)."""
    start = _starting_files(environment_dir, frozenset() if whole else NOT_COPIED)
    found, complete = _walk_app(app_dir, start)
    rows = [(rel, "added" if rel not in start else "changed", entry)
            for rel, entry in found.items() if entry.differs]
    if complete:  # a walk cut short cannot tell a deleted file from one it did not reach
        rows += [(rel, "deleted", None) for rel in sorted(set(start) - set(found))]
    rows.sort(key=lambda row: row[0])
    files, budget = [], MAX_TEXT_CHARS
    for rel, change, entry in rows[:MAX_FILES]:
        left = _left_file(rel, change, entry, budget)
        budget -= len(left.text) if left.kind == "text" else 0
        files.append(left)
    return LeftBehind(summary=readable(summary, MAX_SUMMARY_CHARS)[0], ended=ended[:100],
                      files=files, more_files=max(0, len(rows) - MAX_FILES), complete=complete)


def readable(text: str, limit: int) -> tuple[str, bool]:
    """`text` without control or format characters (newlines and tabs kept), at most `limit`
    characters; and whether it was cut."""
    kept = "".join(c for c in scrub(text) if c in "\n\t"
                   or unicodedata.category(c) not in ("Cc", "Cf", "Cs"))
    return kept[:limit], len(kept) > limit


class _Entry:
    """One non-directory entry of /app as lstat saw it: its kind, its first bytes (a regular
    file) or target (a link), and whether it differs from the task's starting file `origin`."""

    def __init__(self, dir_fd: int, name: str, info: os.stat_result, origin: Path | None) -> None:
        self.info = info
        self.kind: Kind = ("link" if stat.S_ISLNK(info.st_mode) else
                           "text" if stat.S_ISREG(info.st_mode) else "special")
        self.head = b""
        self.link = ""
        self.differs = True
        try:
            if self.kind == "link":
                self.link = os.readlink(name, dir_fd=dir_fd)
                self.differs = origin is None or not origin.is_symlink() or \
                    os.readlink(origin) != self.link
            elif self.kind == "text":
                self.head, self.differs = _read(dir_fd, name, info, origin)
        except OSError:
            self.kind = "unreadable"


def _read(dir_fd: int, name: str, info: os.stat_result, origin: Path | None
          ) -> tuple[bytes, bool]:
    """The file's first bytes, and whether it differs from `origin`, from one open of it: no
    link followed, no FIFO waited on, only the regular file with one name that lstat saw."""
    fd = os.open(name, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_NOCTTY, dir_fd=dir_fd)
    try:
        opened = os.fstat(fd)
        if not stat.S_ISREG(opened.st_mode) or opened.st_nlink != 1 or \
                (opened.st_dev, opened.st_ino) != (info.st_dev, info.st_ino):
            raise OSError("not the regular file with one name that lstat saw")
        whole = opened.st_size <= COMPARE_BYTES
        content = _read_up_to(fd, opened.st_size if whole else 4 * MAX_FILE_CHARS)
    finally:
        os.close(fd)
    head = content[:4 * MAX_FILE_CHARS]
    try:
        start = origin.lstat() if origin is not None else None
    except OSError:
        start = None
    if start is None or not stat.S_ISREG(start.st_mode) or start.st_size != opened.st_size:
        return head, True
    if not whole:  # too large to read twice: a same-size file is told apart by its mtime
        return head, start.st_mtime_ns != opened.st_mtime_ns
    return head, origin.read_bytes() != content


def _read_up_to(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left > 0 and (chunk := os.read(fd, min(left, 1 << 20))):
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def _walk_app(app_dir: Path, start: dict[str, Path]) -> tuple[dict[str, _Entry], bool]:
    """Every non-directory entry under `app_dir` by relative path, walked through directory
    descriptors opened with O_NOFOLLOW; False when a bound stopped the walk."""
    found: dict[str, _Entry] = {}
    visited = 0
    todo = [(os.open(app_dir, os.O_RDONLY | os.O_DIRECTORY), "", 0)]
    complete = True
    while todo:
        dir_fd, prefix, depth = todo.pop()
        try:
            with os.scandir(dir_fd) as entries:
                for entry in entries:
                    visited += 1
                    if visited > MAX_ENTRIES:
                        complete = False
                        break
                    rel = f"{prefix}{entry.name}"
                    try:
                        info = entry.stat(follow_symlinks=False)
                        if not stat.S_ISDIR(info.st_mode):
                            found[rel] = _Entry(dir_fd, entry.name, info, start.get(rel))
                        elif depth >= MAX_DEPTH:
                            complete = False
                        else:
                            child = os.open(entry.name, os.O_RDONLY | os.O_DIRECTORY
                                            | os.O_NOFOLLOW, dir_fd=dir_fd)
                            todo.append((child, f"{rel}/", depth + 1))
                    except OSError:  # gone, or swapped for a link since it was listed
                        complete = False
        finally:
            os.close(dir_fd)
        if not complete:
            for fd, _, _ in todo:
                os.close(fd)
            break
    return found, complete


def _starting_files(environment_dir: Path, skipped: frozenset[str]) -> dict[str, Path]:
    """The task's starting files (what the sandbox put in /app) by relative path."""
    if not environment_dir.is_dir():
        return {}
    start = {}
    for root, dirs, files in os.walk(environment_dir):
        dirs[:] = [d for d in dirs if d not in skipped]
        for name in files + [d for d in dirs if (Path(root) / d).is_symlink()]:
            if name not in skipped:
                path = Path(root) / name
                start[path.relative_to(environment_dir).as_posix()] = path
    return start


def _left_file(rel: str, change: Change, entry: _Entry | None, budget: int) -> LeftFile:
    path = readable(rel, MAX_PATH_CHARS)[0]
    if entry is None:
        return LeftFile(path=path, change=change, kind="text")
    size = entry.info.st_size
    if entry.kind == "link":
        return LeftFile(path=path, change=change, kind="link", size=size,
                        text=readable(entry.link, MAX_PATH_CHARS)[0])
    if entry.kind != "text":
        return LeftFile(path=path, change=change, kind=entry.kind, size=size)
    if b"\0" in entry.head:
        return LeftFile(path=path, change=change, kind="binary", size=size)
    text, cut = readable(entry.head.decode("utf-8", errors="replace"),
                         max(0, min(MAX_FILE_CHARS, budget)))
    return LeftFile(path=path, change=change, size=size, text=text,
                    cut=cut or len(entry.head) < size)
