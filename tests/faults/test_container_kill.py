"""SIGKILL of the driver while a rollout's container runs: the container outlives it (podman keeps
it, not the driver), and `evoharness evolve --resume` sweeps it (its owner is gone), runs the
rollout again and leaves no container of the run behind, nor a temporary folder of the killed
driver's. The kill point is a state, not a time: the agent's first command has started the
container and its model call waits."""
from __future__ import annotations

import os
import re
import signal
import subprocess
import tempfile
import time
from pathlib import Path

from evoharness.tasks.sandbox import owners
from tests.fixtures.containers import (
    ENGINE, TOOL, container_home, needs_engine, tool_task, unique,
)
from tests.fixtures.e2e_agents import done, wait, write_script

from .conftest import CLI, ROOT, edit_config, evoharness, rollouts

pytestmark = needs_engine
__all__ = ["container_home"]  # the fixture, used by name
SOLVE = {"tool": "shell", "arguments": {"command": f"{TOOL} hello > /app/out.txt"}}


def _containers(task_id: str) -> list[str]:
    return ENGINE.text(["ps", "-a", "--filter", f"label=evoharness.task={task_id}",
                        "--format", "{{.Names}}"]).split()


def _owned_dirs() -> list[Path]:
    """Temporary folders named with an owner token (tasks/sandbox/leftovers.py)."""
    return [p for p in Path(tempfile.gettempdir()).glob("evo-*-*")
            if re.match(r"evo-[a-z]+-[0-9a-f]{32}-", p.name)]


def _script(path: Path, *, hold: bool) -> str:
    """The code agent solves, then (with `hold`) its next model call waits for the kill."""
    return write_script(path, [{"when": {"instruction_has": [TOOL]},
                                "replies": [SOLVE, wait(done()) if hold else done()]}])


def test_a_killed_driver_leaves_no_container_after_resume(tmp_path, container_home,
                                                          monkeypatch):
    task_id = unique("kill")
    suite = tmp_path / "suite"
    tool_task(suite / task_id)
    (suite / "suite.toml").write_text(f'[split]\ntrain = ["{task_id}"]\nheldout = []\n')
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    model = _script(tmp_path / "agent.yaml", hold=True)
    run_dir = tmp_path / "run"
    made = evoharness("init", run_dir, "--tasks", suite, "--model", model, "-k", "1",
                      "--iterations", "0", "--environment", "container")
    assert made.returncode == 0, made.stderr
    edit_config(run_dir, calibration=False, exam={"on_stop": False})

    before = set(_owned_dirs())
    driver = subprocess.Popen([*CLI, "evolve", str(run_dir)], cwd=ROOT, env=os.environ.copy(),
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        while not _containers(task_id):  # the first command started the container
            assert driver.poll() is None, "the driver ended before its rollout started"
            time.sleep(0.2)
        os.kill(driver.pid, signal.SIGKILL)
        driver.wait()
    finally:
        if driver.poll() is None:
            driver.kill()
    assert _containers(task_id), "the container outlives its driver"
    left = {p for p in set(_owned_dirs()) - before  # the killed driver's
            if not owners.alive(p.name.split("-")[2])}
    assert any(p.name.startswith("evo-box-") for p in left), left

    _script(tmp_path / "agent.yaml", hold=False)  # this time the agent finishes
    resumed = evoharness("evolve", run_dir, "--resume", timeout=600)
    assert resumed.returncode == 0, resumed.stderr
    assert _containers(task_id) == []
    assert [p for p in left if p.exists()] == []  # swept on resume
    assert [outcome for _, outcome, _ in rollouts(run_dir)] == ["pass"]
