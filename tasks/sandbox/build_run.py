"""Running one image build to its end or its timeout, leaving nothing running: the engine's client
in a session of its own, and (podman as root, cgroupfs) the build's RUN steps under a cgroup
parent of their own. The RUN steps are not the client's children (buildah starts them in a new
session), so killing the client alone leaves them running; at a timeout both go, and a killed
driver's builds are swept by the next batch. What is built and how the image is named is
images.py's."""
from __future__ import annotations

import functools
import os
import secrets
import signal
import subprocess
import time
from pathlib import Path

from evoharness.tasks.sandbox import owners
from evoharness.tasks.sandbox.engine import Engine, engine_env

CGROUP_ROOT = Path("/sys/fs/cgroup")
PARENT = "evoharness-build"
KILL_PATIENCE_S = 30.0


class BuildGroup:
    """The cgroup the build's RUN steps are put under (`--cgroup-parent`), in every hierarchy
    the engine makes them in; None-like (no flags) where podman cannot be given one."""

    def __init__(self, engine: Engine | None, path: str | None = None) -> None:
        # Named with this process's owner token: a killed driver's build is swept (sweep()).
        self.path = path or f"/{PARENT}/{owners.this_process()}-{secrets.token_hex(4)}"
        self.usable = engine is not None and engine.name == "podman" and os.geteuid() == 0 \
            and _cgroupfs(engine)

    def flags(self) -> list[str]:
        return ["--cgroup-parent", self.path] if self.usable else []

    def _dirs(self) -> list[Path]:
        return [root / self.path.lstrip("/") for root in _hierarchies()
                if (root / self.path.lstrip("/")).is_dir()]

    def pids(self) -> set[int]:
        found: set[int] = set()
        for top in self._dirs():
            for procs in top.rglob("cgroup.procs"):
                try:
                    found |= {int(p) for p in procs.read_text().split()}
                except OSError:
                    continue
        return found

    def kill(self) -> bool:
        """SIGKILL every process under the group until none is left, then remove it; whether
        there was any."""
        deadline = time.monotonic() + KILL_PATIENCE_S
        killed = False
        while (pids := self.pids()) and time.monotonic() < deadline:
            killed = True
            for pid in pids:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            time.sleep(0.05)  # the kernel tears processes down asynchronously
        self.remove()
        return killed

    def remove(self) -> None:
        for top in self._dirs():
            for folder in sorted(top.rglob("*"), key=lambda p: -len(p.parts)):
                if folder.is_dir():
                    _rmdir(folder)
            _rmdir(top)


def _hierarchies() -> list[Path]:
    if (CGROUP_ROOT / "cgroup.controllers").exists():
        return [CGROUP_ROOT]
    try:
        return [p for p in CGROUP_ROOT.iterdir() if p.is_dir() and not p.is_symlink()]
    except OSError:
        return []


def sweep() -> list[str]:
    """Kill the RUN steps of builds whose driver is gone (its client, in a session of its own,
    outlives it, and a step may never end) and remove their cgroups; returns their paths."""
    found = {f"/{PARENT}/{d.name}" for root in _hierarchies() if (root / PARENT).is_dir()
             for d in (root / PARENT).iterdir() if d.is_dir()}
    dead = [path for path in sorted(found)
            if not owners.alive(path.rsplit("/", 1)[-1].partition("-")[0])]
    for path in dead:
        BuildGroup(None, path).kill()
    return dead


@functools.cache
def _cgroupfs(engine: Engine) -> bool:
    """Whether podman manages cgroups itself (a `--cgroup-parent` path), not through systemd."""
    return engine.text(["info", "--format", "{{.Host.CgroupManager}}"], check=False) == "cgroupfs"


def _rmdir(folder: Path) -> None:
    try:
        folder.rmdir()
    except OSError:
        pass  # still busy, or another build's: the kernel frees an empty one


def _wait(proc: subprocess.Popen, timeout: float) -> int:
    """The build's end; TimeoutExpired past `timeout` (a test ends it at a point of progress)."""
    return proc.wait(timeout=timeout)


def run_build(engine: Engine, argv: list[str], out, timeout: float) -> int | str:
    """`ENGINE build ...` writing to `out`: its exit status, or why it was stopped."""
    group = BuildGroup(engine)
    proc = subprocess.Popen([engine.binary, argv[0], *group.flags(), *argv[1:]], stdout=out,
                            stderr=subprocess.STDOUT, env=engine_env(), start_new_session=True)
    try:
        return _wait(proc, timeout)
    except subprocess.TimeoutExpired:
        return f"ran past environment.build_timeout_sec ({timeout:g}s)"
    finally:
        _stop(proc, group)


def _stop(proc: subprocess.Popen, group: BuildGroup) -> None:
    """End a build, RUN steps first: the client then fails the step and removes its working
    container, as it does for a failed build. A client killed first leaves the container in the
    engine's storage for good (podman lists it with `ps --external`) and its step running."""
    if group.kill() and proc.poll() is None:
        try:
            proc.wait(timeout=KILL_PATIENCE_S)
        except subprocess.TimeoutExpired:
            pass
    if proc.poll() is None:
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        group.kill()  # a step it started while dying
