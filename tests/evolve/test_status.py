"""`evoharness status` from the trace store, and from the run's files while another process (a
running evolve) holds the store."""
from __future__ import annotations

import os
import subprocess
import sys
from contextlib import contextmanager
from pathlib import Path

import pytest

from evolve.config import RunPaths
from evolve.status import status
from tests.fixtures.recorded_run import build_recorded_run

HOLD_STORE = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1])
print("holding", flush=True)
time.sleep(60)
"""


@contextmanager
def store_held_elsewhere(run_dir: Path):
    """Another process with the store open for writing, as a running `evoharness evolve` has."""
    holder = subprocess.Popen([sys.executable, "-c", HOLD_STORE, str(RunPaths(root=run_dir).db)],
                              stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline().strip() == "holding"
        yield
    finally:
        holder.kill()
        holder.wait()


@pytest.fixture()
def run_dir(tmp_path):
    return build_recorded_run(tmp_path / "run")


def test_status_from_the_store_counts_decisions(run_dir):
    data = status(run_dir)
    assert data["live"] is False
    assert [row["kept"] for row in data["iterations"]] == [1, 0, 0]
    assert [row["reverted"] for row in data["iterations"]] == [1, 2, 0]


def test_status_while_the_store_is_held_reads_the_files_and_agrees(run_dir):
    from_store = status(run_dir)
    with store_held_elsewhere(run_dir):
        live = status(run_dir)
    assert live["live"] is True
    assert _figures(live) == _figures(from_store)  # the same rollouts, read from their files
    assert all(row["kept"] is None for row in live["iterations"])  # verdicts live in the store


def test_status_command_says_evolve_is_running(run_dir):
    command = [str(Path(sys.executable).parent / "evoharness"), "status", str(run_dir)]
    with store_held_elsewhere(run_dir):
        result = subprocess.run(command, capture_output=True, text=True,
                                env={**os.environ, "COLUMNS": "200"})
    assert result.returncode == 0, result.stderr
    assert "evolve is running" in result.stdout


def _figures(data):
    return [(r["iteration"], r["pass_rate_train"], r["pass_rate_heldout"], r["rollouts"],
             r["tokens"], r["changes"]) for r in data["iterations"]]
