"""/app's own filesystem (tasks/sandbox/volume.py), as root: the room it leaves the sandbox's user, the
entries it allows, and a killed process's volumes swept by the next one."""
from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evoharness.tasks.sandbox.limits import Limits
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.sandbox.volume import Volume

from tests.tasks.conftest import needs_bwrap

pytestmark = [needs_bwrap, pytest.mark.skipif(os.geteuid() != 0, reason="mounting needs root")]


def _mounted(path: Path) -> bool:
    return any(line.split()[4] == str(path) for line in Path("/proc/self/mountinfo").open())


def test_the_user_gets_storage_mb_less_what_the_task_brought(tmp_path):
    """8 MiB of task files on a 32 MiB volume leave the sandbox's user 24 MiB (to within the
    few blocks the filesystem keeps for itself), and not one byte more."""
    (tmp_path / "env").mkdir()
    (tmp_path / "env" / "data").write_bytes(b"d" * (8 << 20))
    volume = Volume.create(Limits(storage_mb=32), holds=(8 << 20, 2))
    assert volume is not None
    box = None
    try:
        subprocess.run(["cp", "-a", f"{tmp_path / 'env'}/.", str(volume.app)], check=True)
        volume.seal()
        box = BwrapSandbox(volume.app, limits=Limits(storage_mb=32), volume=volume)
        out = box.exec("head -c 40M /dev/zero > f; ls -l --block-size=1 f | cut -d' ' -f5",
                       timeout=60).output
        written = int(out.split()[-1])
        assert "No space left on device" in out
        assert (24 << 20) - (64 << 10) <= written <= 24 << 20, written
    finally:
        if box is not None:
            box.close()
    assert not _mounted(volume.mount) and not volume.root.exists()


def test_the_entries_are_capped_by_its_inodes(hello_task):
    box = BwrapSandbox.for_task(hello_task, limits=Limits(storage_mb=64, max_files=2000))
    try:
        out = box.exec("for i in $(seq 5000); do : > /app/f$i || break; done; ls /app | wc -l",
                       timeout=300).output
    finally:
        box.close()
    assert "No space left on device" in out
    assert 2000 <= int(out.split()[-1]) < 2100, out  # rounded up to whole inode table blocks


KILLED = textwrap.dedent("""
    import os, signal
    from evoharness.tasks.sandbox.limits import Limits
    from evoharness.tasks.sandbox.volume import Volume
    volume = Volume.create(Limits(storage_mb=16))
    print(volume.root, flush=True)
    os.kill(os.getpid(), signal.SIGKILL)
""")


def test_a_killed_processs_volume_is_swept_by_the_next():
    done = subprocess.run([sys.executable, "-c", KILLED], capture_output=True, text=True,
                          cwd=Path(__file__).resolve().parents[3])
    left = Path(done.stdout.strip())
    assert done.returncode == -9 and _mounted(left / "fs"), done.stderr
    mine = Volume.create(Limits(storage_mb=16))
    try:
        assert not _mounted(left / "fs") and not left.exists()
        assert mine is not None and mine.root.exists()  # a live owner's volume stays
    finally:
        mine.close()
