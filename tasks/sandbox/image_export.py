"""What a sandbox needs from a built image, read once: its /app with numeric owners and modes (each
sandbox's /app starts as a copy of it) and its user and group tables, streamed from `export` of a
container created, never started, for the purpose. `cp CONTAINER:/app -` would be shorter, but
podman writes every owner there as 0. Building the image is images.py's."""
from __future__ import annotations

import os
import secrets
import shutil
import subprocess
import tarfile
from pathlib import Path

from evoharness.tasks.sandbox.engine import OWNER_LABEL, Engine, EngineError, engine_env, last_lines, owner_label

APP = "app"
TABLES = ("etc/passwd", "etc/group")
EXPORT_TIMEOUT_S = 1800.0


def export_image(engine: Engine, ref: str, dest: Path) -> dict[str, str]:
    """The image's /app into `dest` (made anew; `dest` itself gets /app's owner and mode); returns
    the user and group tables by path ("" when the image has none)."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    name = f"evo-export-{secrets.token_hex(6)}"
    engine.run(["create", "--label", f"{OWNER_LABEL}={owner_label()}", "--name", name, ref, "true"])
    try:
        stream = subprocess.Popen([engine.binary, "export", name], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=engine_env())
        try:
            tables = _unpack(stream.stdout, dest)
        finally:
            stream.stdout.close()
            _, errors = stream.communicate(timeout=EXPORT_TIMEOUT_S)
        if stream.returncode != 0:
            raise EngineError(f"`{engine.name} export` failed: {last_lines(errors)}",
                              field="image", value=ref)
    finally:
        engine.remove([name])
    return tables


def _unpack(stream, dest: Path) -> dict[str, str]:
    tables = dict.fromkeys(TABLES, "")
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            path = member.name.removeprefix("./").rstrip("/")
            if path == APP and member.isdir():
                _own(dest, member)
            elif path.startswith(f"{APP}/"):
                archive.extract(_under_app(member, path), dest, filter=_kept,
                                numeric_owner=True)
            elif path in tables and member.isfile():
                handle = archive.extractfile(member)
                tables[path] = handle.read().decode(errors="replace") if handle else ""
    return tables


def _under_app(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo:
    """The member renamed to its place under /app (a hard link's target too)."""
    linkname = member.linkname
    if member.islnk():
        linkname = linkname.removeprefix("./").removeprefix(f"{APP}/")
    return member.replace(name=path.removeprefix(f"{APP}/"), linkname=linkname, deep=False)


def _kept(member: tarfile.TarInfo, path: str) -> tarfile.TarInfo:
    """Owners and modes kept, set-id bits dropped; nothing written outside `path` (tar's own
    filter, which refuses names and links leading out)."""
    mode = member.mode & 0o1777
    return tarfile.tar_filter(member.replace(mode=mode, deep=False), path).replace(mode=mode,
                                                                                   deep=False)


def _own(dest: Path, member: tarfile.TarInfo) -> None:
    if os.geteuid() == 0:
        os.chown(dest, member.uid, member.gid)
    dest.chmod(member.mode & 0o1777)
