"""The run lock: one process changes a run; the others are refused naming it, readers can see who
holds it, and a holder killed with SIGKILL leaves no stale lock."""
from __future__ import annotations

import os
import signal
import subprocess
import sys
from pathlib import Path

import pytest

from evoharness.evolve.ledger import lock
from evoharness.evolve.ledger.lock import RunBusy, RunLock, holder

HOLD = """
import sys
from pathlib import Path
from evoharness.evolve.ledger.lock import RunLock
RunLock(Path(sys.argv[1])).acquire("evolve")
print("holding", flush=True)
sys.stdin.readline()
"""


def hold(path: Path) -> subprocess.Popen:
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path)], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


@pytest.fixture(autouse=True)
def _short_wait(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(lock, "ACQUIRE_S", 0.2)


def test_a_second_process_is_refused_naming_the_holder(tmp_path: Path) -> None:
    path = tmp_path / "ledger" / "lock"
    proc = hold(path)
    try:
        with pytest.raises(RunBusy) as caught:
            RunLock(path).acquire("rollback")
        assert f"evoharness evolve (pid {proc.pid}" in str(caught.value)
        assert "before `rollback`" in str(caught.value)
        assert holder(path).startswith(f"evoharness evolve (pid {proc.pid}")
    finally:
        proc.kill()
        proc.wait()


def test_a_killed_holder_leaves_no_stale_lock(tmp_path: Path) -> None:
    path = tmp_path / "lock"
    proc = hold(path)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    assert holder(path) is None
    mine = RunLock(path)
    mine.acquire("evolve")
    assert f"pid {os.getpid()}" in path.read_text()
    mine.release()
    assert holder(path) is None


def test_nobody_holds_a_run_that_never_ran(tmp_path: Path) -> None:
    assert holder(tmp_path / "no-such-lock") is None
