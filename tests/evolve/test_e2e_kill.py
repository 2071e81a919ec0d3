"""End to end: `evoharness evolve` as a subprocess, killed with SIGKILL during EVAL and again during
EVOLVE (while the scripted server hangs on a known request), then resumed to the end."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import git
import pytest

from evolve.config import RunConfig, StopRules
from evolve.loop import EVALUATE, PHASE_ORDER
from evolve.run import init_run, open_run
from tests.fixtures.e2e_agents import HELPFUL_RULE, ScriptedAgents, change, done

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]
EVOHARNESS = Path(sys.executable).parent / "evoharness"
WAIT_SECONDS = 60.0


def start(run_dir: Path, url: str, *args: str) -> subprocess.Popen:
    log = (run_dir.parent / f"evolve-{time.monotonic_ns()}.log").open("w")
    return subprocess.Popen([str(EVOHARNESS), "evolve", str(run_dir), *args],
                            env={**os.environ, "OLLAMA_HOST": url}, stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def kill_when(proc: subprocess.Popen, ready) -> None:
    """SIGKILL the process group once `ready()` holds (the process must still be running)."""
    deadline = time.monotonic() + WAIT_SECONDS
    while not ready():
        assert proc.poll() is None, f"exited with {proc.returncode} before the kill point"
        assert time.monotonic() < deadline, "the kill point was never reached"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def finish(proc: subprocess.Popen) -> None:
    assert proc.wait(timeout=WAIT_SECONDS) == 0


def test_d_killed_in_eval_and_in_evolve_then_resumed(tmp_path: Path) -> None:
    config = RunConfig(run_id="kill", tasks=SUITE, model="ollama:scripted", k=1, workers=1,
                       rollout_timeout=60, stop=StopRules(iterations=1))
    run_dir = init_run(tmp_path / "run", config).root
    rollouts = run_dir / "iterations" / "it000" / "rollouts"
    agents = ScriptedAgents(solves=lambda system: HELPFUL_RULE in system,
                            evolve_script=[change(HELPFUL_RULE, TRAIN), done()])
    with agents.server() as server:
        agents.hang_on("code", 0, after=2)  # the third rollout's first model call
        kill_when(start(run_dir, server.url), agents.hanging.is_set)
        assert len(list(rollouts.glob("*.json"))) == 2

        agents.hang_on("evolve", 1)  # after the evolve agent's first change is committed
        kill_when(start(run_dir, server.url, "--resume"), agents.hanging.is_set)
        with open_run(run_dir) as run:
            assert run.store.phases_done(run.run_id, 0) == set(EVALUATE)
            assert "Change-Id" in run.repo.log()[0].trailers  # the killed session's commit

        finish(start(run_dir, server.url, "--resume"))

    with open_run(run_dir) as run:
        assert run.store.phases_done(run.run_id, 0) == set(PHASE_ORDER)
        assert run.store.phases_done(run.run_id, 1) == set(EVALUATE)
        ids = [r for (r,) in run.store.con.execute(
            "SELECT rollout_id FROM rollouts WHERE run_id = ?", [run.run_id]).fetchall()]
        decisions = run.store.con.execute("SELECT decision FROM verdicts").fetchall()
        commits = [c.sha for c in run.repo.log()]
        manifest_commit = json.loads(run.store.con.execute(
            "SELECT manifest FROM changes").fetchone()[0])["commit"]
    assert len(ids) == len(set(ids)) == 3 * 2 + 3  # calibrated baseline, then one evaluation
    files = [p.stem for p in run_dir.glob("iterations/*/rollouts/*.json")]
    assert sorted(files) == sorted(ids)
    # Stored rollouts never ran again: one first model call per rollout, plus the killed one.
    assert agents.calls["code", 0] == len(ids) + 1
    assert decisions == [("keep",)]
    assert manifest_commit in commits
    assert git.Repo(run_dir / "workspace").git.fsck("--strict", "--no-dangling") == ""


@pytest.fixture(autouse=True)
def _no_stray_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
