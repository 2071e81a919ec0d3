"""A build's RUN steps under a cgroup of their own (tasks/sandbox/build_run.py): those of a
driver that is gone are killed and their cgroup removed by the next sweep; a live one's are left.
The RUN step here is a plain process put into such a cgroup, as podman's --cgroup-parent puts it
(the engine's side is tests/redteam/test_container_images.py's timeout test)."""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

from evoharness.tasks.sandbox import build_run, owners
from tests.tasks.sandbox.test_owners import dead_token

PIDS = build_run.CGROUP_ROOT / "pids"
pytestmark = pytest.mark.skipif(os.geteuid() != 0 or not (PIDS / "cgroup.procs").exists(),
                                reason="needs root and the cgroup v1 pids hierarchy")


def _step_in(group: str) -> tuple[subprocess.Popen, Path]:
    folder = PIDS / build_run.PARENT / group
    folder.mkdir(parents=True)
    step = subprocess.Popen(["sleep", "1000"])
    (folder / "cgroup.procs").write_text(str(step.pid))
    return step, folder


def test_a_gone_drivers_build_steps_are_killed_and_a_live_ones_kept() -> None:
    gone, gone_dir = _step_in(f"{dead_token()}-test")
    live, live_dir = _step_in(f"{owners.this_process()}-test")
    try:
        swept = build_run.sweep()
        assert gone.wait(timeout=60) == -9 and not gone_dir.exists()
        assert f"/{build_run.PARENT}/{gone_dir.name}" in swept
        assert live.poll() is None and live_dir.is_dir()
    finally:
        for step in (gone, live):
            step.kill()
            step.wait()
        build_run.BuildGroup(None, f"/{build_run.PARENT}/{live_dir.name}").kill()
    assert not live_dir.exists()
