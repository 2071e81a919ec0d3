"""A downloaded task's image turned against the host, through a real engine: its /app holding a
link to a host file and a hard link to that link (the export's unpack would chown and chmod the
host file through them), a FIFO or a device; a sparse file far larger than the task's disk; a RUN
step reaching this host's loopback services; a RUN step outliving its build's timeout; a VOLUME
left behind by every container."""
from __future__ import annotations

import os
import socket
import stat
import subprocess
import threading
import time
from pathlib import Path

import pytest

from evoharness.tasks.sandbox import build_run
from evoharness.tasks.sandbox.bases import load_map
from evoharness.tasks.sandbox.environments import EnvironmentSettings, environments
from evoharness.tasks.sandbox.images import BuildFailed, ImageBuilder
from evoharness.tasks.task import load_task
from tests.fixtures.containers import (
    ENGINE, base_image, container_home, needs_engine, tool_task, unique,
)

pytestmark = needs_engine
__all__ = ["container_home"]  # the fixture, used by name


def image_task(root: Path, dockerfile: str, *, environment: str = "", base: str = "ubuntu:24.04"):
    """A task whose Dockerfile is `dockerfile` FROM `base` (the test base stands in for
    ubuntu)."""
    tool_task(root)
    (root / "environment" / "Dockerfile").write_text(f"FROM {base}\n" + dockerfile)
    (root / "task.toml").write_text((root / "task.toml").read_text() + environment)
    return load_task(root)


def builder(home: Path) -> ImageBuilder:
    return ImageBuilder(ENGINE, home, load_map(home))


@pytest.mark.skipif(os.geteuid() != 0, reason="owners are kept only as root")
def test_an_images_links_cannot_steer_the_unpack_into_host_files(tmp_path, container_home):
    """Reproduced on Python 3.11.7's tar filter: the host file became 0777, owned by 4242."""
    victim = tmp_path / "victim"
    victim.write_text("the host's\n")
    victim.chmod(0o600)
    task = image_task(tmp_path / unique("links"), (
        f"WORKDIR /app\nRUN ln -s {victim} /app/link && chown -h 4242:4242 /app/link && "
        "ln -P /app/link /app/hard && mkfifo /app/fifo && (mknod /app/null c 1 3 || true) && "
        "echo kept > /app/file && ln /app/file /app/file2 && chown 7:7 /app/file && "
        "mkdir /app/ro && chmod 555 /app/ro && echo in > /app/ro/in\n"))
    image = builder(container_home).ensure(task)
    after = victim.lstat()
    assert (stat.S_IMODE(after.st_mode), after.st_uid) == (0o600, os.geteuid())
    app = image.app
    # The export writes whichever of the two it meets first as the link, the other as a hard
    # link to it: that one is left out.
    [kept] = [name for name in ("link", "hard") if os.path.lexists(app / name)]
    assert os.readlink(app / kept) == str(victim) and (app / kept).lstat().st_uid == 4242
    assert not os.path.lexists(app / "fifo") and not os.path.lexists(app / "null")
    assert (app / "file2").stat().st_ino == (app / "file").stat().st_ino
    assert (app / "file").stat().st_uid == 7 and (app / "ro" / "in").read_text() == "in\n"
    assert stat.S_IMODE((app / "ro").stat().st_mode) == 0o555
    assert any(d.startswith(("hard:", "link:")) for d in image.dropped), image.dropped


def test_a_sparse_file_larger_than_the_tasks_disk_is_refused_unwritten(tmp_path,
                                                                       container_home):
    task = image_task(tmp_path / unique("sparse"), "WORKDIR /app\nRUN truncate -s 300M /app/blob"
                      " && echo x > /app/small\n", environment="storage_mb = 64\n")
    with pytest.raises(BuildFailed) as info:
        builder(container_home).ensure(task)
    said = str(info.value)
    assert "environment.storage_mb" in said and "64" in said and "blob" in said, said
    cache = container_home / "images"
    written = sum(f.lstat().st_blocks * 512 for f in cache.rglob("*") if f.is_file())
    assert written < 16 << 20, written  # nothing like 300 MB reached the host's disk


def test_a_build_step_cannot_reach_the_hosts_loopback(tmp_path, container_home):
    server = socket.create_server(("127.0.0.1", 0))
    port = server.getsockname()[1]
    reached: list[bytes] = []

    def accept() -> None:  # until the test's own connection, made once the build is over
        while not reached or reached[-1] != b"test-done":
            conn, _ = server.accept()
            reached.append(conn.recv(100))
            conn.close()
    waiter = threading.Thread(target=accept, daemon=True)
    waiter.start()
    hosts = ("127.0.0.1", "10.0.2.2", "10.88.0.1", "host.containers.internal")
    probe = " ; ".join(f"(echo in-build > /dev/tcp/{host}/{port} && echo REACHED-{host}) "
                       f"|| echo blocked-{host}" for host in hosts)
    task = image_task(tmp_path / unique("net"), f'RUN ["/bin/bash", "-c", "{probe}"]\n')
    try:
        image = builder(container_home).ensure(task)
    finally:
        with socket.create_connection(("127.0.0.1", port)) as done:
            done.sendall(b"test-done")
        waiter.join()
        server.close()
    log = image.log.read_text()
    assert reached == [b"test-done"] and "\nREACHED" not in log, log
    assert "blocked-127.0.0.1" in log and "--network host" not in log


def _running(marker: str) -> list[str]:
    found = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and marker.encode() in (proc / "cmdline").read_bytes():
                found.append(proc.name)
        except OSError:
            continue
    return found


@pytest.mark.skipif(os.geteuid() != 0 or ENGINE is None or ENGINE.name != "podman",
                    reason="the RUN steps' cgroup needs podman as root")
def test_a_build_past_its_timeout_leaves_no_run_step_running(tmp_path, container_home,
                                                             monkeypatch):
    """The build times out once its RUN step runs (progress, not a clock: the wait for the build
    is replaced by one that ends, as a timeout does, when the step is seen). Neither the step
    nor the build's working container is left: the container is named after its FROM image, a
    tag of the test base only this test uses, so another build running beside it is not taken
    for it."""
    marker = str(4_000_000 + int.from_bytes(os.urandom(3), "big"))
    base = f"localhost/evo-slow-{marker}"
    ENGINE.run(["tag", base_image(), f"{base}:1"])
    task = image_task(tmp_path / unique("slow"),
                      f"RUN echo step-started-{marker} && sleep {marker}\n", base=f"{base}:1")

    def logged() -> bool:
        return any(f"step-started-{marker}" in log.read_text(errors="replace")
                   for log in container_home.rglob("build.log"))

    def until_the_step_runs(proc: subprocess.Popen, timeout: float) -> int:
        while not (_running(f"sleep {marker}") and logged()):
            if proc.poll() is not None:
                return proc.returncode
            time.sleep(0.05)
        assert _working_containers(base), "the build's container was not seen"
        raise subprocess.TimeoutExpired(proc.args, timeout)
    monkeypatch.setattr(build_run, "_wait", until_the_step_runs)
    try:
        with pytest.raises(BuildFailed) as info:
            builder(container_home).ensure(task)
        assert "build_timeout_sec" in str(info.value)
        assert "step-started" in str(info.value.hint)  # the step ran before the timeout
        assert _running(f"sleep {marker}") == []
        assert _working_containers(base) == []
    finally:
        for pid in _running(f"sleep {marker}"):
            os.kill(int(pid), 9)
        ENGINE.run(["rm", "--force", *_working_containers(base)], check=False)
        ENGINE.run(["rmi", f"{base}:1"], check=False)


def _working_containers(image: str) -> list[str]:
    """The engine's build containers made FROM `image` (podman names them after it)."""
    names = ENGINE.text(["ps", "--all", "--external", "--format", "{{.Names}}"]).split()
    stem = image.rsplit("/", 1)[-1]
    return [name for name in names if name.startswith(f"{stem}-working-container")]


def test_an_images_volume_goes_with_its_container(tmp_path, container_home):
    task = image_task(tmp_path / unique("volume"), "WORKDIR /app\nVOLUME /data\n"
                      "RUN echo built > /app/built.txt\n")
    box = environments(EnvironmentSettings(kind="container", home=container_home))(task)
    try:
        out = box.exec("echo x > /data/x 2>&1; grep ' /data ' /proc/mounts", timeout=60).output
        mounts = ENGINE.text(["inspect", "--format",
                              "{{range .Mounts}}{{.Name}} {{end}}", box.name]).split()
    finally:
        box.close()
    assert "tmpfs" in out, out
    left = [m for m in mounts if ENGINE.run(["volume", "exists", m], check=False).returncode == 0]
    assert left == []
