"""The host's own handling of trees a sandbox's user made (chown, copy, delete), through GNU
tools, which walk a tree of any depth (fts) where Python's walkers stop (PATH_MAX, recursion).
Whatever stops them is the tree's fault: UnusableFiles, which the verifier turns into a failed
rollout, never an infrastructure error."""
from __future__ import annotations

import subprocess
from pathlib import Path

ENV = {"PATH": "/usr/bin:/bin", "LC_ALL": "C"}
SECONDS = 600  # a safety net: these take well under a second on any tree the disk cap allows


class UnusableFiles(OSError):
    """The host could not hand over, copy or walk files a sandbox's user made (a tree nested past
    PATH_MAX, a disk too full to copy them onto): the fault of whoever made them."""


def _gnu(argv: list[str], what: str) -> str:
    try:
        done = subprocess.run(argv, capture_output=True, text=True, env=ENV, timeout=SECONDS)
    except subprocess.TimeoutExpired:
        raise UnusableFiles(f"{what}: {argv[0]} took over {SECONDS}s") from None
    if done.returncode != 0:
        last = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise UnusableFiles(f"{what}: {last[:300]}")
    return done.stdout


def tree_size(path: Path) -> tuple[int, int]:
    """(bytes, entries) under `path`, sizes as files claim them, links not followed."""
    what = "the files could not be measured"
    size = _gnu(["du", "-s", "-B1", "--apparent-size", "--", str(path)], what).split()[0]
    entries = _gnu(["du", "-s", "--inodes", "--", str(path)], what).split()[0]
    return int(size), int(entries)


def chown_tree(path: Path, uid: int) -> None:
    """Give `path`'s tree to `uid`: links themselves, never what they point at."""
    _gnu(["chown", "-R", "-P", "--no-dereference", f"{uid}:{uid}", "--", str(path)],
         "the files could not be given to the sandbox's user")


def copy_tree(source: Path, dest: Path) -> None:
    """`source`'s content into the existing directory `dest`, links copied as links."""
    _gnu(["cp", "-a", "--no-dereference", "--", f"{source}/.", str(dest)],
         "the files could not be copied")


def remove_tree(path: Path) -> None:
    """Delete a tree of any depth, never crossing into another filesystem; what cannot be
    deleted stays (as shutil.rmtree(ignore_errors=True) would leave it)."""
    subprocess.run(["rm", "-rf", "--one-file-system", "--", str(path)], capture_output=True,
                   env=ENV, timeout=SECONDS)
