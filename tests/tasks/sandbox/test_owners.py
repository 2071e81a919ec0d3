"""tasks/sandbox/owners.py: an owner token says whether its process lives, from any PID namespace, and a
sweep run from another PID namespace leaves a live process's /app volume alone (a Ray test node
under `unshare --pid` swept the volumes of the run beside it, whose rollouts then lost /app)."""
from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from evoharness.tasks.sandbox import owners, volume
from evoharness.tasks.sandbox.limits import Limits
from evoharness.tasks.sandbox.volume import Volume

ROOT = Path(__file__).resolve().parents[3]
MAKE_TOKEN = "from evoharness.tasks.sandbox import owners; print(owners.this_process())"


def dead_token() -> str:
    """The token of a process that has exited."""
    done = subprocess.run([sys.executable, "-c", MAKE_TOKEN], capture_output=True, text=True,
                          cwd=ROOT, check=True)
    return done.stdout.strip()


def in_own_pid_namespace(code: str) -> subprocess.CompletedProcess:
    return subprocess.run(["unshare", "--pid", "--fork", "--mount-proc", sys.executable, "-c", code],
                          capture_output=True, text=True, cwd=ROOT)


needs_unshare = pytest.mark.skipif(os.geteuid() != 0 or shutil.which("unshare") is None,
                                   reason="a PID namespace of its own needs root and unshare")


def test_a_live_process_is_alive_and_an_exited_one_is_not():
    assert owners.alive(owners.this_process())
    gone = dead_token()
    assert not owners.alive(gone)
    assert not (owners.owners_dir() / gone).exists()  # the sweep removed the dead token
    assert not owners.alive(gone)  # and still says so


def test_what_is_not_a_token_counts_as_alive():
    for text in ["", "../../etc/passwd", "1234:1796166795.22", "a" * 31]:
        assert owners.alive(text)


@needs_unshare
def test_another_pid_namespace_sees_a_live_owner_alive_and_a_dead_one_dead():
    mine, gone = owners.this_process(), dead_token()
    code = (f"from evoharness.tasks.sandbox import owners; print(owners.alive({mine!r}), "
            f"owners.alive({gone!r}))")
    seen = in_own_pid_namespace(code)
    assert seen.stdout.split() == ["True", "False"], seen.stderr


@needs_unshare
def test_a_sweep_from_another_pid_namespace_leaves_a_live_volume():
    volume = Volume.create(Limits(storage_mb=16))
    if volume is None:
        pytest.skip("this machine cannot mount a volume")
    try:
        swept = in_own_pid_namespace("from evoharness.tasks.sandbox.volume import sweep; print(sweep())")
        assert swept.returncode == 0, swept.stderr
        assert volume.root.exists() and os.path.ismount(volume.mount)
    finally:
        volume.close()


def test_a_sweep_ends_a_process_still_naming_a_dead_owners_volume():
    """What a SIGKILL during bubblewrap's start-up can leave (containers/bubblewrap#633): a bwrap
    that waits forever, its command line naming the volume it was to bind."""
    root = Path(tempfile.mkdtemp(prefix=volume.PREFIX))
    stuck = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(600)",
                              f"{root}/fs/app"])
    # Its owner is named dead only now: any sweep on this machine (another suite's) may be the
    # one that takes the volume, and each must find the process already there.
    (root / "owner").write_text(dead_token())
    try:
        volume.sweep()
        assert stuck.wait(timeout=60) == -signal.SIGKILL
        assert not root.exists()
    finally:
        stuck.kill()
        stuck.wait()
