"""End to end: `evoharness evolve` as a subprocess, killed with SIGKILL during EVAL and again during
EVOLVE, at points the scripted model holds the run at (a reply that waits), found by watching the
run's files, then resumed to the end. The store is opened after every kill."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.ledger import EVALUATE, PHASE_ORDER, RunPaths
from evoharness.evolve.run import init_run, read_run
from tests.fixtures.e2e_agents import (
    HELPFUL_RULE, change, done, evolve_rule, solve_rule, wait, write_script,
)
from evoharness.traces.store import TraceStore

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]
EVOHARNESS = Path(sys.executable).parent / "evoharness"
WAIT_SECONDS = 120.0  # a safety net only: every kill point is a state of the run's files


def start(run_dir: Path, *args: str) -> subprocess.Popen:
    log = (run_dir.parent / f"evolve-{time.monotonic_ns()}.log").open("w")
    return subprocess.Popen([str(EVOHARNESS), "evolve", str(run_dir), *args], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)


def kill_when(proc: subprocess.Popen, ready: Callable[[], bool]) -> None:
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


def store_opens(run_dir: Path) -> None:
    with TraceStore(RunPaths(root=run_dir).db, read_only=True) as store:
        store.verify()


@pytest.mark.slow
def test_d_killed_in_eval_and_in_evolve_then_resumed(tmp_path: Path) -> None:
    script = tmp_path / "agents.yaml"
    code = solve_rule(has=[HELPFUL_RULE])
    # 1: the code agent holds on write-beta (workers=1: alpha's rollout is the only one written)
    model = write_script(script, [solve_rule(instruction_has=["beta.txt"], first=wait(done())),
                                  code])
    config = RunConfig(run_id="kill", tasks=SUITE, model=model, k=1, workers=1,
                       rollout_timeout=600, stop=StopRules(iterations=1))
    run_dir = init_run(tmp_path / "run", config).root
    rollouts = run_dir / "iterations" / "it000" / "rollouts"
    kill_when(start(run_dir), lambda: len(list(rollouts.glob("*.json"))) == 1)
    store_opens(run_dir)
    first = {p.name: p.read_bytes() for p in rollouts.glob("*.json")}

    # 2: the evolve agent commits its change, then holds before its next reply
    write_script(script, [evolve_rule([change(HELPFUL_RULE, TRAIN), wait(done())]), code])
    workspace = git.Repo(run_dir / "workspace")
    kill_when(start(run_dir, "--resume"),
              lambda: "Change-Id" in workspace.head.commit.message)
    store_opens(run_dir)
    _, ledger = read_run(run_dir)
    assert ledger.phases_done(0) == set(EVALUATE)

    # 3: nothing holds any more: the run completes
    write_script(script, [evolve_rule([change(HELPFUL_RULE, TRAIN), done()]), code])
    finish(start(run_dir, "--resume"))

    _, ledger = read_run(run_dir)
    assert ledger.phases_done(0) == set(PHASE_ORDER)
    assert ledger.phases_done(1) == set(EVALUATE)
    with ledger.reading() as store:
        ids = [r for (r,) in store.con.execute(
            "SELECT rollout_id FROM rollouts WHERE trial_change = ''").fetchall()]
    assert len(ids) == len(set(ids)) == 3 * 2 + 3  # calibrated baseline, then one evaluation
    files = {p.stem: p for p in run_dir.glob("iterations/*/rollouts/*.json")}
    assert sorted(files) == sorted(ids)
    # The stored rollout never ran again: its file is the one written before the first kill.
    assert {name: (rollouts / name).read_bytes() for name in first} == first
    [record] = ledger.changes()
    assert record.decision == "keep"
    assert record.entry.commit in [c.hexsha for c in workspace.iter_commits()]
    assert json.loads((run_dir / "iterations/it000/evolve_trace.json").read_text())
    assert workspace.git.fsck("--strict", "--no-dangling") == ""


@pytest.mark.slow
@pytest.mark.parametrize("stop", ["kill", "kill -INT of a background job"])
def test_d_a_signal_stops_a_run_as_ctrl_c_does_and_resume_goes_on(tmp_path: Path, stop: str) -> None:
    """`kill` (SIGTERM) and a SIGINT sent to a run the shell started in the background, which
    starts with SIGINT ignored, stop it as Ctrl-C does: the rollout in flight is stored, and a
    resumed run finishes without running it again. Before, SIGTERM lost the rollout in flight and
    the background run never stopped."""
    marks = tmp_path / "holds"
    script = tmp_path / "agents.yaml"
    # The hold ends on its own (a bounded wait): the rollout in flight then ends and is stored.
    # Its mark stands for the whole wait; 10 s leaves a loaded machine's poll ample time to see it.
    held = solve_rule(instruction_has=["alpha.txt"], first=wait(done(), seconds=10, marks=marks))
    model = write_script(script, [held, solve_rule()])
    config = RunConfig(run_id="signal", tasks=SUITE, model=model, k=1, workers=1,
                       rollout_timeout=600, stop=StopRules(iterations=1), calibration=False)
    run_dir = init_run(tmp_path / "run", config).root
    background = stop != "kill"
    proc = subprocess.Popen(
        [str(EVOHARNESS), "evolve", str(run_dir)], stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE, text=True, start_new_session=True,
        preexec_fn=(lambda: signal.signal(signal.SIGINT, signal.SIG_IGN)) if background else None)
    deadline = time.monotonic() + WAIT_SECONDS
    while not (marks.is_dir() and any(marks.iterdir())):
        assert proc.poll() is None and time.monotonic() < deadline, "never reached the hold"
        time.sleep(0.05)
    proc.send_signal(signal.SIGINT if background else signal.SIGTERM)
    _, stderr = proc.communicate(timeout=WAIT_SECONDS)
    assert proc.returncode == 130 and "stopping: the rollouts in flight end first" in stderr, stderr
    store_opens(run_dir)
    rollouts = run_dir / "iterations" / "it000" / "rollouts"
    [alpha] = rollouts.glob("*write-alpha*.json")  # the rollout in flight, stored
    before = alpha.read_bytes()

    write_script(script, [solve_rule()])
    finish(start(run_dir, "--resume"))
    assert alpha.read_bytes() == before
    _, ledger = read_run(run_dir)
    assert ledger.phases_done(0) == set(PHASE_ORDER)
