"""Security tests: real commands in the bubblewrap sandbox, each contained with a clear exit
reason and the host unchanged."""
from __future__ import annotations

import os
import secrets
import shutil
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import psutil
import pytest

from evoharness.tasks.sandbox import bwrap
from evoharness.tasks.sandbox.bwrap import BwrapSandbox, Limits, Mount

from tests.tasks.conftest import needs_bwrap

pytestmark = needs_bwrap
REPO = Path(__file__).resolve().parents[3]


def _running_as(uid: int, patience: float = 30.0) -> list[psutil.Process]:
    """The processes of `uid` that are still running once those already killed have finished
    dying: the kernel removes a killed process from its cgroup before it is gone from the
    process table, and a zombie no one reaps runs nothing."""
    deadline = time.monotonic() + patience
    while True:
        running = []
        for proc in psutil.process_iter(["uids", "status"]):
            if proc.info["uids"].real == uid and proc.info["status"] != psutil.STATUS_ZOMBIE:
                running.append(proc)
        if not running or time.monotonic() > deadline:
            return running
        time.sleep(0.05)


def _unique_seconds() -> str:
    """A sleep no other process on this machine runs: another checkout's suite may run this
    same test at the same time."""
    return f"{600 + secrets.randbelow(10**6) / 1000:.3f}"


def _sleepers(seconds: str) -> list[psutil.Process]:
    return [p for p in psutil.process_iter(["cmdline"]) if p.info["cmdline"] == ["sleep", seconds]]


def _descendants() -> set[tuple[int, str]]:
    """This test process's live descendants. A returned command must add none; earlier tests in
    the session may have left long-lived ones (servers, a Ray cluster), which are not its own."""
    found = set()
    for proc in psutil.Process().children(recursive=True):
        try:
            if proc.status() != psutil.STATUS_ZOMBIE:
                found.add((proc.pid, " ".join(proc.cmdline())[:80]))
        except psutil.NoSuchProcess:
            pass  # it ended while we looked
    return found


def test_app_is_a_writable_copy_of_the_task(sandbox, sum_task):
    box = BwrapSandbox.for_task(sum_task)
    try:
        result = box.exec("pwd; cat numbers.txt; echo hi > new.txt; ls", timeout=20)
        assert result.exit_reason == "exited" and result.exit_code == 0
        assert result.output.splitlines()[:4] == ["/app", "3", "14", "25"]
        assert "Dockerfile" not in result.output
        assert (box.app_dir / "new.txt").read_text() == "hi\n"
        assert not (sum_task.environment_dir / "new.txt").exists()
    finally:
        box.close()


def test_hidden_paths_are_absent(sandbox):
    result = sandbox.exec(
        f"ls /tests; ls /solution; ls {REPO}/tasks; ls {REPO}/.git; ls /logs; ls /root/.ssh",
        timeout=20)
    assert result.exit_code != 0
    assert result.output.count("No such file or directory") == 6


def test_python_and_pytest_work_offline(sandbox):
    result = sandbox.exec("python3 -c 'import pytest, sys; print(sys.prefix)'", timeout=30)
    assert result.exit_code == 0, result.output


def test_a_python_installed_under_tmp_stays_visible(sandbox, monkeypatch):
    # A CI checkout (and its .venv) may live under /tmp, where the sandbox mounts its own tmpfs.
    prefix = Path(tempfile.mkdtemp(dir="/tmp", prefix="evo-venv-"))
    prefix.chmod(0o755)
    (prefix / "bin").mkdir()
    tool = prefix / "bin" / "evo-tool"
    tool.write_text("#!/bin/sh\necho found\n")
    tool.chmod(0o755)
    monkeypatch.setattr("sys.prefix", str(prefix))
    try:
        result = sandbox.exec("evo-tool", timeout=20)
    finally:
        shutil.rmtree(prefix)
    assert result.output.strip() == "found", result.output


@pytest.mark.parametrize("target", ["/etc/evo-probe", f"{REPO}/evo-probe", "/root/evo-probe",
                                    "/usr/evo-probe"])
def test_writes_outside_app_fail_and_host_is_unchanged(sandbox, target):
    result = sandbox.exec(f"echo owned > {target}", timeout=20)
    assert result.exit_code != 0 and result.exit_reason == "exited"
    assert not Path(target).exists()


def test_home_is_a_private_tmpfs(sandbox):
    marker = "evo-home-probe-31"
    result = sandbox.exec(f"echo $HOME; echo {marker} > ~/.bashrc && cat ~/.bashrc", timeout=20)
    assert result.output.splitlines() == ["/tmp", marker]
    host_files = [Path.home() / ".bashrc", Path("/tmp/.bashrc")]
    assert not any(p.exists() and marker in p.read_text() for p in host_files)
    assert sandbox.exec("cat ~/.bashrc", timeout=20).exit_code != 0  # gone with its command


def test_no_network_even_to_host_loopback(sandbox):
    with socket.socket() as server:
        server.bind(("127.0.0.1", 0))
        server.listen()
        port = server.getsockname()[1]
        script = (f"import socket; socket.create_connection(('127.0.0.1', {port}), timeout=3); "
                  "print('connected')")
        result = sandbox.exec(f'python3 -c "{script}"', timeout=20)
        server.settimeout(0.2)
        with pytest.raises(socket.timeout):
            server.accept()
    assert result.exit_code != 0 and "connected" not in result.output
    assert "ConnectionRefusedError" in result.output or "unreachable" in result.output


def test_fork_bomb_is_contained(sandbox):
    before = _descendants()
    result = sandbox.exec("f(){ f | f & }; f; sleep 1; echo still-here", timeout=30)
    assert result.exit_reason == "exited"
    assert "Resource temporarily unavailable" in result.output
    assert _descendants() - before == set()
    if os.geteuid() == 0:
        assert _running_as(sandbox.uid) == []


@pytest.mark.skipif(os.geteuid() != 0, reason="a private uid needs root")
def test_without_a_cgroup_the_private_uids_processes_are_swept(sandbox, monkeypatch):
    """Each command's cgroup holds every process it starts, so after a contained command the
    sweep does not look through the machine's processes; after a command that ran without one it
    does, and kills what runs as the sandbox's uid (here a process started as that uid outside)."""
    seconds = _unique_seconds()
    stray = subprocess.Popen(["sleep", seconds], preexec_fn=lambda: os.setuid(sandbox.uid))
    try:
        assert sandbox.exec("true", timeout=20).exit_reason == "exited"
        assert sandbox.kill_leftovers() == 0 and stray.poll() is None  # contained: not looked for
        monkeypatch.setattr(bwrap.Cgroup, "create", classmethod(lambda cls, limits: None))
        assert sandbox.exec("true", timeout=20).exit_reason == "exited"
        stray.wait(timeout=30)  # killed (its status was taken by the sweep's own wait)
        assert _running_as(sandbox.uid) == [] and sandbox.kill_leftovers() == 0
    finally:
        stray.kill()


def test_endless_output_is_capped_and_killed(tmp_path):
    box = BwrapSandbox(tmp_path, limits=Limits(output_bytes=2000, hard_output_bytes=200_000))
    result = box.exec("yes evo", timeout=30)
    assert result.exit_reason == "output_cap" and result.truncated
    assert result.output.startswith("evo\n") and result.output.endswith("evo\n")
    assert "bytes of output cut" in result.output and len(result.output) < 3000


def test_long_output_keeps_head_and_tail(tmp_path):
    box = BwrapSandbox(tmp_path, limits=Limits(output_bytes=100))
    result = box.exec("seq 1 1000", timeout=20)
    assert result.exit_reason == "exited" and result.truncated
    assert result.output.startswith("1\n2\n") and result.output.endswith("999\n1000\n")


def test_never_ending_command_times_out_and_leaves_nothing(sandbox):
    before, seconds = _descendants(), _unique_seconds()
    result = sandbox.exec(f"sleep {seconds} & sleep {seconds}", timeout=1)
    assert result.timed_out and result.exit_reason == "timeout"
    assert _descendants() - before == set()
    assert _sleepers(seconds) == []


@pytest.mark.parametrize("pidfds", [True, False], ids=["pidfd", "no-pidfd"])
def test_a_command_is_waited_for_to_its_exit_or_its_timeout(sandbox, monkeypatch, pidfds):
    """The wait for a command's exit reads a pidfd; where the kernel has none (before Linux
    5.3) it polls, with the same results."""
    if not pidfds:
        monkeypatch.delattr(os, "pidfd_open")
    done = sandbox.exec("echo out; exit 3", timeout=20)
    assert (done.exit_reason, done.exit_code, done.output) == ("exited", 3, "out\n")
    late = sandbox.exec(f"sleep {_unique_seconds()}", timeout=1)
    assert late.exit_reason == "timeout" and late.timed_out


def test_background_process_dies_with_its_command(sandbox, monkeypatch):
    """The PID namespace alone ends it: the uid and cgroup sweep is switched off here."""
    monkeypatch.setattr(sandbox, "kill_leftovers", lambda: 0)
    seconds = _unique_seconds()
    result = sandbox.exec(f"(sleep {seconds}; echo late > late.txt) & echo started", timeout=20)
    assert result.output.strip() == "started"
    deadline = time.monotonic() + 30  # a safety net: the kernel tears the namespace down at once
    while _sleepers(seconds) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _sleepers(seconds) == []


def test_file_size_limit(tmp_path):
    box = BwrapSandbox(tmp_path, limits=Limits(fsize_mb=1))
    result = box.exec("head -c 5000000 /dev/zero > big.bin; echo rc=$?", timeout=20)
    assert "File size limit exceeded" in result.output
    assert (tmp_path / "big.bin").stat().st_size == 1 << 20


def test_memory_limit(tmp_path):
    box = BwrapSandbox(tmp_path, limits=Limits(memory_mb=200))
    result = box.exec("python3 -c 'x = bytearray(400 * 2**20)'", timeout=30)
    assert result.exit_code != 0 and "MemoryError" in result.output


# Four children of 100 MB each under a 256 MB cgroup: each reports when its memory is touched,
# then waits to be released; the parent releases them once every child has reported or died. No
# clock: the cgroup must kill some (at most two fit), whatever the order they run in.
CROWD = """
import os, select
done_r, done_w = os.pipe()
release_r, release_w = os.pipe()
kids = set()
for _ in range(4):
    pid = os.fork()
    if pid == 0:
        b = bytearray(100 << 20)
        b[::4096] = b"x" * len(b[::4096])
        os.write(done_w, b"!")
        os.read(release_r, 1)
        os._exit(0)
    kids.add(pid)
reported = 0
while reported + (4 - len(kids)) < 4:
    if select.select([done_r], [], [], 0.1)[0]:
        reported += len(os.read(done_r, 4))
    for pid in list(kids):
        if os.waitpid(pid, os.WNOHANG)[0]:
            kids.discard(pid)
os.close(release_w)
"""


@pytest.mark.skipif(os.geteuid() != 0, reason="the memory cgroup needs root here")
def test_a_command_the_memory_cgroup_kills_reports_memory_limit(tmp_path):
    """docs/sandbox.md: each process stays under RLIMIT_AS, the cgroup caps their sum."""
    box = BwrapSandbox(tmp_path, limits=Limits(memory_mb=256))
    result = box.run(["python3", "-c", CROWD], timeout=300)  # a hang guard: no clock decides
    assert result.exit_reason == "memory_limit", (result.exit_reason, result.output[-500:])
    plain = box.run(["python3", "-c", CROWD.replace("100 << 20", "10 << 20")], timeout=300)
    assert (plain.exit_reason, plain.exit_code) == ("exited", 0), plain.output[-500:]


def test_extra_mount_is_read_only_and_per_command(tmp_path, hello_task):
    box = BwrapSandbox(tmp_path)
    seen = box.exec("cat /tests/test.sh > /dev/null && touch /tests/x", timeout=20,
                    mounts=[Mount(source=hello_task.tests_dir, dest="/tests")])
    assert "Read-only file system" in seen.output
    assert "No such file" in box.exec("ls /tests", timeout=20).output


def test_harness_is_read_only_at_harness(tmp_path):
    harness = tmp_path / "harness"
    (harness / "tools").mkdir(parents=True)
    (harness / "tools" / "echo.py").write_text(
        "import sys, os\nprint(sys.stdin.read(), os.getcwd())\nopen(__file__, 'a')\n")
    (harness / "tools" / "echo.py").chmod(0o666)  # only the mount itself may refuse the write
    app = tmp_path / "app"
    app.mkdir()
    result = BwrapSandbox(app, harness_dir=harness).run_python("tools/echo.py", '{"a": 1}',
                                                               timeout=20)
    assert result.output.startswith('{"a": 1} /app')
    assert "Read-only file system" in result.output


def test_missing_mount_source_is_a_sandbox_error(tmp_path):
    result = BwrapSandbox(tmp_path).exec(
        "true", timeout=20, mounts=[Mount(source=tmp_path / "absent", dest="/tests")])
    assert result.exit_reason == "sandbox_error"


def test_system_tools_work_and_host_config_stays_out(sandbox):
    result = sandbox.exec("echo a b | awk '{print $2}'; git --version; ls /etc/gitconfig",
                          timeout=20)
    lines = result.output.splitlines()
    assert lines[0] == "b" and lines[1].startswith("git version")
    assert "No such file or directory" in lines[2]
