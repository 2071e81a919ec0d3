"""What a sandbox needs from a built image, read once: its /app with numeric owners and modes (each
sandbox's /app starts as a copy of it) and its user and group tables, streamed from `export` of a
container created, never started, for the purpose, and written by unpack.py (no link followed,
no special file, a byte cap). `cp CONTAINER:/app -` would be shorter, but podman writes every
owner there as 0. Building the image is images.py's."""
from __future__ import annotations

import secrets
import shutil
import subprocess
import tarfile
from pathlib import Path

from evoharness.tasks.sandbox.engine import (
    OWNER_LABEL, Engine, EngineError, engine_env, last_lines, owner_label,
)
from evoharness.tasks.sandbox.unpack import Unpacked, Unpacker

APP = "app"
TABLES = ("etc/passwd", "etc/group")
EXPORT_TIMEOUT_S = 1800.0
TABLE_BYTES = 4 << 20  # a user table larger than this is not one


def export_image(engine: Engine, ref: str, dest: Path, *, cap: int,
                 most_entries: int) -> Exported:
    """The image's /app into `dest` (made anew; `dest` itself gets /app's owner and mode), within
    `cap` bytes and `most_entries` entries (unpack.TooLarge past them); returns the user and group
    tables by path ("" when the image has none) and what was left out."""
    shutil.rmtree(dest, ignore_errors=True)
    dest.mkdir(parents=True)
    name = f"evo-export-{secrets.token_hex(6)}"
    engine.run(["create", "--label", f"{OWNER_LABEL}={owner_label()}", *engine.no_volumes(),
                "--name", name, ref, "true"])
    try:
        stream = subprocess.Popen([engine.binary, "export", name], stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, env=engine_env())
        try:
            exported = _unpack(stream.stdout, Unpacker(str(dest), cap, most_entries))
        except BaseException:
            stream.kill()  # a refused export is not read to its end (a sparse terabyte)
            raise
        finally:
            stream.stdout.close()
            _, errors = stream.communicate(timeout=EXPORT_TIMEOUT_S)
        if stream.returncode != 0:
            raise EngineError(f"`{engine.name} export` failed: {last_lines(errors)}",
                              field="image", value=ref)
    finally:
        engine.remove([name])
    return exported


class Exported:
    """The image's user tables by path, and the members of its /app that were not made."""

    def __init__(self, tables: dict[str, str], done: Unpacked) -> None:
        self.tables = tables
        self.dropped = done.dropped
        self.bytes = done.bytes


def _unpack(stream, unpacker: Unpacker) -> Exported:
    tables = dict.fromkeys(TABLES, "")
    with tarfile.open(fileobj=stream, mode="r|") as archive:
        for member in archive:
            path = member.name.removeprefix("./").rstrip("/")
            if path == APP and member.isdir():
                unpacker.done.dirs.append((".", member))
            elif path.startswith(f"{APP}/"):
                unpacker.add(archive, _under_app(member), path.removeprefix(f"{APP}/"))
            elif path in tables and member.isfile() and member.size <= TABLE_BYTES:
                handle = archive.extractfile(member)
                tables[path] = handle.read().decode(errors="replace") if handle else ""
    return Exported(tables, unpacker.finish())


def _under_app(member: tarfile.TarInfo) -> tarfile.TarInfo:
    """A hard link's target named as under /app (one to a file outside it names no file
    unpacked here, and is dropped)."""
    if not member.islnk():
        return member
    target = member.linkname.removeprefix("./")
    target = target.removeprefix(f"{APP}/") if target.startswith(f"{APP}/") else f"../{target}"
    return member.replace(linkname=target, deep=False)
