"""What travels to a rollout's worker machine: a task directory or a harness tree as one tar
archive named by its content, unpacked once per machine into a cache. Sending the archives (Ray's
object store) is ray_executor.py's; what runs on the files is the runner's."""
from __future__ import annotations

import hashlib
import io
import os
import shutil
import tarfile
import tempfile
from collections.abc import Callable
from pathlib import Path

# Per machine, shared by every worker process on it; named by content, so never stale.
CACHE = Path(tempfile.gettempdir()) / "evoharness-bundles"
TASK_FILES_LEFT_BEHIND = ("solution",)  # the reference solution never leaves the driver


def pack_dir(root: Path, leave_out: tuple[str, ...] = ()) -> bytes:
    """`root`'s files as a tar archive that depends on their content only (sorted names, no owners
    or times, modes 0755/0644), so the same task always has the same key."""
    buffer = io.BytesIO()
    with tarfile.open(fileobj=buffer, mode="w") as tar:
        for path in _walk(root, leave_out):
            tar.add(path, arcname=path.relative_to(root).as_posix(), recursive=False,
                    filter=_normalised)
    return buffer.getvalue()


def _walk(root: Path, leave_out: tuple[str, ...]) -> list[Path]:
    found = []
    for top, dirs, files in os.walk(root):
        here = Path(top)
        dirs[:] = sorted(d for d in dirs if here != root or d not in leave_out)
        found += [here / d for d in dirs] + [here / f for f in sorted(files)]
    return sorted(found, key=lambda p: p.relative_to(root).parts)


def _normalised(info: tarfile.TarInfo) -> tarfile.TarInfo:
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    info.mtime = 0
    if info.isdir() or info.mode & 0o111:
        info.mode = 0o755
    else:
        info.mode = 0o644
    return info


def content_key(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()[:32]


def unpack_cached(key: str, fetch: Callable[[], bytes], cache: Path = CACHE) -> Path:
    """The directory holding archive `key`, unpacked on first use; `fetch` is called only then.
    Concurrent workers may both unpack: the first rename wins and the other copy is dropped."""
    target = cache / key
    if target.is_dir():
        return target
    cache.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=f".{key}.", dir=cache))
    try:
        with tarfile.open(fileobj=io.BytesIO(fetch())) as tar:
            tar.extractall(staging, filter="data")
        staging.chmod(0o755)  # mkdtemp's 0700 would keep a sandbox's own uid out of /harness
        os.rename(staging, target)
    except OSError:
        if not target.is_dir():
            raise
    finally:
        shutil.rmtree(staging, ignore_errors=True)
    return target
