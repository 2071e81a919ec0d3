"""`evoharness status` through the run ledger: decisions as the loop recorded them, and while
another process (a running evolve) holds the run, the same figures with who is running it."""
from __future__ import annotations

import os
import subprocess
import sys
import threading
from contextlib import contextmanager
from pathlib import Path

import pytest

from evoharness.evolve.cli.run import compact_count
from evoharness.evolve.ledger import RunPaths
from evoharness.evolve.status import status
from tests.fixtures.recorded_run import build_recorded_run

HOLD_RUN = """
import sys, duckdb
from pathlib import Path
from evoharness.evolve.ledger import RunPaths
from evoharness.evolve.ledger.lock import RunLock
paths = RunPaths(root=Path(sys.argv[1]))
RunLock(paths.lock).acquire("evolve")
con = duckdb.connect(str(paths.db))  # as the loop holds it while it writes
print("holding", flush=True)
sys.stdin.readline()
con.close()  # the write is over; the run lock stays
print("released", flush=True)
sys.stdin.readline()
"""


@contextmanager
def evolve_elsewhere(run_dir: Path):
    """Another process holding the run lock and, until `release()`, the store for writing."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_RUN, str(run_dir)], text=True,
                              stdin=subprocess.PIPE, stdout=subprocess.PIPE)

    def release() -> None:
        holder.stdin.write("\n")
        holder.stdin.flush()
        assert holder.stdout.readline().strip() == "released"

    try:
        assert holder.stdout.readline().strip() == "holding"
        yield holder, release
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture()
def run_dir(tmp_path):
    return build_recorded_run(tmp_path / "run")


def test_status_counts_decisions_as_the_loop_recorded_them(run_dir):
    data = status(run_dir)
    assert data["live"] is False and data["running"] is None
    assert [row["kept"] for row in data["iterations"]] == [1, 0, 0]
    assert [row["reverted"] for row in data["iterations"]] == [1, 2, 0]
    assert (data["current_iteration"], data["next_phase"]) == (2, "TRIAL")
    # the trials' rollouts are counted apart from the evaluations'
    assert [row["rollouts"] for row in data["iterations"]] == [16, 8, 8]
    assert data["iterations"][0]["trial_rollouts"] > 0 and data["iterations"][2]["trial_rollouts"] == 0


def test_status_waits_out_a_write_and_says_who_runs_the_run(run_dir):
    quiet = status(run_dir)
    with evolve_elsewhere(run_dir) as (holder, release):
        answer: dict = {}
        reader = threading.Thread(target=lambda: answer.update(status(run_dir)))
        reader.start()
        reader.join(timeout=1.0)
        assert reader.is_alive()  # waiting for the writer, not failing
        release()
        reader.join(timeout=60)
    assert answer["live"] is True and f"pid {holder.pid}" in answer["running"]
    assert answer["iterations"] == quiet["iterations"]


def test_status_command_says_evolve_is_running(run_dir):
    command = [str(Path(sys.executable).parent / "evoharness"), "status", str(run_dir)]
    with evolve_elsewhere(run_dir) as (holder, release):
        release()
        result = subprocess.run(command, capture_output=True, text=True,
                                env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert result.returncode == 0, result.stderr
    assert f"evoharness evolve (pid {holder.pid}" in result.stdout
    assert "is running it, now at iteration 2 TRIAL\n" in result.stdout  # one line, never wrapped
    assert RunPaths(root=run_dir).lock.exists()


def test_status_of_a_stopped_run_still_running_says_it_is_in_the_final_exam(run_dir):
    """After a stop rule held, the loop's process goes on with the exam: not "iteration 2 ...",
    and no forecast of the whole run."""
    from evoharness.evolve.run import open_run

    command = [str(Path(sys.executable).parent / "evoharness"), "status", str(run_dir)]
    assert "forecast:" in subprocess.run(command, capture_output=True, text=True).stdout
    with open_run(run_dir) as run:
        run.ledger.record_stop(2, "2 iteration(s) done")
    with evolve_elsewhere(run_dir) as (holder, release):
        release()
        result = subprocess.run(command, capture_output=True, text=True)
    assert f"(pid {holder.pid}, since" in result.stdout
    assert "is running it, now at the final exam\n" in result.stdout
    after = subprocess.run(command, capture_output=True, text=True).stdout
    assert "stopped after iteration 2: 2 iteration(s) done\n" in after
    assert "forecast:" not in after  # the whole run's forecast says nothing about a stopped one


def test_the_status_table_fits_80_columns_whole(run_dir):
    """Piped or logged (rich's 80 columns) nothing is cut: every header and row whole."""
    result = subprocess.run([str(Path(sys.executable).parent / "evoharness"), "status",
                             str(run_dir)], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "…" not in result.stdout and max(map(len, lines)) <= 80
    header = next(line for line in lines if line.split()[:2] == ["iter", "train"])
    assert header.split() == ["iter", "train", "held-out", "rollouts", "infra", "trials",
                              "tokens", "changes", "kept", "reverted"]
    rows = [line.split() for line in lines[lines.index(header) + 2:][:3]]
    assert [(row[0], row[3], row[-2], row[-1]) for row in rows] == [
        ("0", "16", "1", "1"), ("1", "8", "0", "2"), ("2", "8", "0", "0")]


def test_status_opens_with_the_answer_and_the_path_of_every_change(run_dir):
    """No exam yet, so the answer says so; then one row per change (iteration, component,
    prediction, trial effect, decision and by what), before the iterations."""
    lines = _status_lines(run_dir)
    assert lines[0].startswith("no final exam yet")
    assert lines[1] == "the path: 5 changes, 1 kept"
    assert lines[2].split() == ["iter", "change", "component", "trial", "decision", "by"]
    path = {line.split()[1]: line.split() for line in lines[4:14] if len(line.split()) > 5}
    assert path["c0-prompt"] == ["0", "c0-prompt", "system_prompt", "+100", "p=.035", "keep",
                                 "trial"]
    assert path["c1-tool"][-2:] == ["revert", "trial"] and path["c2-memory"][-2:] == [
        "pending", "-"]
    tool = next(i for i, line in enumerate(lines) if "c1-tool" in line)
    # under each change, what it predicted and any stable task its trial saw fall
    assert lines[tool + 1].split() == ["predicted", "gamma", ".60,", "-beta", ".20;",
                                       "regressed", "beta"]
    assert lines.index(next(l for l in lines if l.startswith("next:"))) > 4
    assert status(run_dir)["lineage"][0]["by"] == "its trial"


def _status_lines(run_dir) -> list[str]:
    result = subprocess.run([str(Path(sys.executable).parent / "evoharness"), "status",
                             str(run_dir)], capture_output=True, text=True,
                            env={k: v for k, v in os.environ.items() if k != "COLUMNS"})
    assert result.returncode == 0, result.stderr
    return result.stdout.splitlines()


def test_the_path_wraps_a_long_prediction_between_task_names():
    """At 80 columns a table column folded `count-extensions-script` in two; the prediction line
    now wraps only between tasks."""
    from evoharness.evolve.cli.run import path_lines
    from evoharness.evolve.lineage import LineageRow

    tasks = ["count-extensions-script", "fix-inventory-module", "git-resolve-merge-conflict",
             "customer-report", "rename-to-markdown"]
    row = LineageRow(iteration=12, change_id="night-it012-c2", component="middleware",
                     fixes=dict.fromkeys(tasks, 0.3), regressions={}, expected_delta=10,
                     tried=False, outcome="pending", decision="pending", by="not judged yet")
    lines = path_lines([row])
    assert max(map(len, lines)) <= 80 and len(lines) > 4  # the prediction took two lines
    words = " ".join(lines[3:]).replace(",", "").split()
    assert words == ["predicted"] + [w for t in tasks for w in (t, ".30")]
