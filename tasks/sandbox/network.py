"""Internet for a task that asks for it (allow_internet = true), without the host's own services:
the sandbox keeps its private network namespace (so the host's loopback and abstract UNIX sockets
stay out of reach) and slirp4netns gives it a user-mode route out, with host loopback disabled."""
from __future__ import annotations

import json
import os
import select
import shutil
import subprocess
import time
from pathlib import Path

from evoharness.errors import EvoError

SLIRP_MTU = "65520"
DNS = "10.0.2.3"  # slirp4netns's DNS forwarder inside the namespace
ATTACH_SECONDS = 30.0  # a safety net: attaching normally takes milliseconds


def require_slirp() -> str:
    path = shutil.which("slirp4netns")
    if path is None:
        raise EvoError("the task allows internet access but slirp4netns is not installed",
                       field="environment.allow_internet", value=True,
                       hint="install it (apt install slirp4netns); the sandbox never shares the "
                            "host's network")
    return path


def _read_json(fd: int, deadline: float) -> dict:
    data = b""
    while time.monotonic() < deadline:
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline - time.monotonic()))
        if not ready:
            break
        chunk = os.read(fd, 4096)
        if not chunk:
            break
        data += chunk
        try:
            return json.loads(data)
        except ValueError:
            continue
    raise OSError("bubblewrap did not report its namespace")


def _wait_for_loopback(pid: int, deadline: float) -> None:
    """Until bwrap has configured the namespace's loopback (127.0.0.1 on a lo that is up: its
    local route exists). bwrap reports the namespace before it does that, and slirp4netns
    configuring the same namespace at the same time makes bwrap's setup fail."""
    while b"127.0.0.1" not in Path(f"/proc/{pid}/net/fib_trie").read_bytes():
        if time.monotonic() > deadline:
            raise OSError("bubblewrap never brought the sandbox's loopback up")
        time.sleep(0.002)


class UserNetwork:
    """One command's user-mode network. bwrap reports its namespace on `info` and waits on `block`
    until slirp4netns has configured the interface, so the command never runs without it."""

    def __init__(self, slirp: str, *, user_namespace: bool) -> None:
        self.slirp = slirp
        self.user_namespace = user_namespace
        self.info_r, self.info_w = os.pipe()
        self.block_r, self.block_w = os.pipe()
        self.exit_r, self.exit_w = os.pipe()
        self.process: subprocess.Popen | None = None
        self._open = {self.info_r, self.info_w, self.block_r, self.block_w, self.exit_r, self.exit_w}

    def _close(self, *fds: int) -> None:
        for fd in fds:
            if fd in self._open:
                self._open.discard(fd)
                os.close(fd)

    def bwrap_args(self) -> list[str]:
        return ["--info-fd", str(self.info_w), "--block-fd", str(self.block_r)]

    @property
    def child_fds(self) -> tuple[int, ...]:
        return (self.info_w, self.block_r)

    def attach(self) -> None:
        """After bwrap started: start slirp4netns in its namespace, then let the command run."""
        self._close(self.info_w, self.block_r)  # bwrap holds them now
        deadline = time.monotonic() + ATTACH_SECONDS
        try:
            pid = int(_read_json(self.info_r, deadline)["child-pid"])
        except (KeyError, TypeError, ValueError):
            raise OSError("bubblewrap reported no namespace pid") from None
        _wait_for_loopback(pid, deadline)
        ready_r, ready_w = os.pipe()
        argv = [self.slirp, "--configure", "--mtu", SLIRP_MTU, "--disable-host-loopback",
                "--enable-sandbox", "--exit-fd", str(self.exit_r), "--ready-fd", str(ready_w)]
        if self.user_namespace:
            argv += ["--userns-path", f"/proc/{pid}/ns/user"]
        self.process = subprocess.Popen([*argv, str(pid), "tap0"], pass_fds=(self.exit_r, ready_w),
                                        stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                        stderr=subprocess.DEVNULL, env={"PATH": "/usr/bin:/bin"})
        self._close(self.exit_r)  # slirp4netns exits when our write end closes
        os.close(ready_w)
        try:
            ready, _, _ = select.select([ready_r], [], [], ATTACH_SECONDS)
            if not ready or os.read(ready_r, 1) != b"1":
                raise OSError("slirp4netns did not bring the network up")
        finally:
            os.close(ready_r)
        os.write(self.block_w, b"1")

    def close(self) -> None:
        self._close(*list(self._open))
        if self.process is not None:
            try:
                self.process.wait(timeout=ATTACH_SECONDS)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
