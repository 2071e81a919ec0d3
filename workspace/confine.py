"""Keeping a workspace's files in bounds: paths confined to its root (no '..', absolute paths,
symlinks or .git), and exact snapshots to put every file back. Which edits to make is edits.py's."""
from __future__ import annotations

import os
from pathlib import Path, PurePosixPath

from pydantic import BaseModel

from evoharness.errors import EvoError


def confine(root: Path, rel: str) -> Path:
    """`rel` as a path inside `root`, refusing anything that could reach outside it or into .git."""
    pure = PurePosixPath(rel)
    if "\x00" in rel or not pure.parts or pure.is_absolute() or rel.startswith("~"):
        raise EvoError("path must be relative to the workspace", file=rel, field="path",
                       hint="write e.g. tools/check.py")
    if ".." in pure.parts:
        raise EvoError("'..' is not allowed in workspace paths", file=rel, field="path")
    if any(part.lower() == ".git" for part in pure.parts):
        raise EvoError("the workspace's .git directory is not writable", file=rel, field="path")
    path = root
    for part in pure.parts:
        path = path / part
        if path.is_symlink():
            raise EvoError("path goes through a symlink", file=rel, field="path",
                           hint="symlinks could lead outside the workspace; use a regular file")
    if not path.resolve().is_relative_to(root.resolve()):
        raise EvoError("path leaves the workspace", file=rel, field="path")
    return path


class Snapshot(BaseModel):
    """Every regular file (bytes and mode) and folder of a workspace, outside .git."""

    files: dict[str, tuple[bytes, int]]
    folders: set[str]


def _tree(root: Path) -> tuple[list[Path], list[Path]]:
    """Regular files and folders under root, top-down, outside .git; symlinks are skipped
    (confine() refuses them, so edits never change them)."""
    files, folders = [], []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != ".git" and not Path(dirpath, d).is_symlink()]
        folders += [Path(dirpath, d) for d in dirnames]
        files += [Path(dirpath, f) for f in filenames if not Path(dirpath, f).is_symlink()]
    return files, folders


def snapshot(root: Path) -> Snapshot:
    files, folders = _tree(root)
    return Snapshot(
        files={str(p.relative_to(root)): (p.read_bytes(), p.stat().st_mode) for p in files},
        folders={str(p.relative_to(root)) for p in folders},
    )


def restore(root: Path, before: Snapshot) -> None:
    """Put every file back exactly (bytes and mode); remove files and folders the edits added."""
    files, folders = _tree(root)
    for path in files:
        if str(path.relative_to(root)) not in before.files:
            path.unlink()
    for folder in reversed(folders):  # deepest first, so parents are empty by the time we get there
        if str(folder.relative_to(root)) not in before.folders:
            folder.rmdir()
    for rel in sorted(before.folders):
        (root / rel).mkdir(exist_ok=True)
    for rel, (data, mode) in before.files.items():
        path = root / rel
        if not path.is_file() or path.read_bytes() != data or path.stat().st_mode != mode:
            path.write_bytes(data)
            path.chmod(mode)
