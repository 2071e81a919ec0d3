"""Attacks on the host through a rollout, driven by a scripted agent through the runner with the
real sandbox: reading the host's secrets from the sandbox's own processes, exhausting memory,
disk or CPU, reaching the host's services with allow_internet, leaving state for later commands.
Each must be contained, reported and leave the rollout recorded; those taking `sandbox_factory`
run in both backends (bubblewrap and a container, tests/redteam/backends.py). Cgroup, network-namespace and
uid tests need root (as CI runs); the README says what a non-root user gets instead."""
from __future__ import annotations

import os
import random
import re
import socket
import subprocess
import threading
import uuid
from pathlib import Path

import pytest

from evoharness.tasks.sandbox.limits import Cgroup, Limits
from evoharness.tasks.sandbox.bwrap import BwrapSandbox

from .backends import container_home, sandbox_factory
from .verifier_rollout import attack, user_task

__all__ = ["container_home", "sandbox_factory"]  # the fixtures, used by name
KEY = "sk-evo-redteam-4b1d"
needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="cgroups and namespaces need root here")
PASS_TEST_SH = "#!/bin/bash\necho 1 > /logs/verifier/reward.txt\n"


def limited_task(tmp_path, **environment):
    """hello-world with other [environment] values (e.g. memory_mb=256)."""
    defaults = {"cpus": "1", "memory_mb": "2048", "storage_mb": "10240"}
    replace = {f"{k} = {defaults[k]}": f"{k} = {v}" for k, v in environment.items() if k in defaults}
    extra = "".join(f"{k} = {v}\n" for k, v in environment.items() if k not in defaults)
    if extra:
        replace["[environment]\n"] = "[environment]\n" + extra
    return user_task(tmp_path, test_sh=PASS_TEST_SH, replace=replace)


@pytest.mark.parametrize("privileged", [True, False], ids=["as root", "as a user (laptop)"])
def test_no_api_key_reaches_the_sandbox(tmp_path, monkeypatch, privileged):
    """bwrap itself starts with a minimal environment: the key is neither in the command's
    environment nor in /proc/1/environ (bwrap's init), which a non-root user's sandbox can read."""
    monkeypatch.setenv("OPENAI_API_KEY", KEY)
    monkeypatch.setattr("evoharness.tasks.sandbox.bwrap.privileged", lambda: privileged)
    task = user_task(tmp_path, test_sh=PASS_TEST_SH)
    result, [environ, env] = attack(tmp_path, task, "tr '\\0' '\\n' < /proc/1/environ",
                                    "env; cat /proc/self/environ")
    assert KEY not in result.model_dump_json()
    if not privileged:  # readable there: it must hold only what the sandbox gave bwrap
        assert "PATH=/usr/bin:/bin" in environ and "OPENAI" not in environ, environ
    assert "HOME=/tmp" in env and "OPENAI" not in env


@needs_root
def test_many_processes_together_are_held_to_the_memory_cap(tmp_path):
    """Each process stays under RLIMIT_AS; the cgroup caps their sum (256 MB): at least two of four
    100 MB processes are killed."""
    task = limited_task(tmp_path, memory_mb=256)
    hog = "python3 -c 'import time; b = bytearray(100 << 20); b[::4096] = b\"x\" * len(b[::4096]); time.sleep(20)'"
    result, [out] = attack(tmp_path, task, f"for i in 1 2 3 4; do ({hog}; echo rc=$?) & done; wait")
    assert out.count("rc=137") >= 2, out
    assert result.outcome.value == "pass"  # the rollout goes on to an ordinary verification


# What is in the sandbox's own /tmp (and home, which is /tmp) but the directories leading to a
# checkout under /tmp: its virtual environment is bound there read-only, on another filesystem.
LEFT_IN_TMP = "find /tmp ~ -xdev -mindepth 1 -not -type d | wc -l"


@needs_root
def test_tmp_is_capped_and_counted(tmp_path, sandbox_factory):
    task = limited_task(tmp_path, memory_mb=256)
    result, [out, later] = attack(
        tmp_path, task,
        "for i in 1 2 3 4; do head -c 100M /dev/zero > /tmp/f$i || echo full; done; du -smx /tmp",
        LEFT_IN_TMP, factory=sandbox_factory)
    found = re.search(r"^(\d+)\s+/tmp", out, re.M)
    assert found, out
    used = int(found.group(1))
    assert "full" in out and used <= 256 // 2, out  # half the memory, the rest for processes
    if sandbox_factory is BwrapSandbox.for_task:  # a container's /tmp lasts the rollout
        assert later.split("[exit")[0].strip() == "0"  # a fresh /tmp for the next command


@needs_root
def test_filling_app_stops_at_the_storage_cap(tmp_path, sandbox_factory):
    """storage_mb = 64: /app is a filesystem with room for 64 MiB, so a command writing 5 MB
    every 50 ms (500 MB if let run) gets ENOSPC once it is full, and /app holds at most 64 MiB."""
    task = limited_task(tmp_path, storage_mb=64)
    result, [out, size] = attack(
        tmp_path, task,
        "for i in $(seq 100); do head -c 5M /dev/zero > /app/f$i; sleep 0.05; done; echo finished",
        "du -sm /app", factory=sandbox_factory)
    assert "No space left on device" in out
    used = int(size.split()[0])
    assert 60 <= used <= 64, size


def _writer(prelude: str, hold: int) -> str:
    """A Python script that runs `prelude`, then writes 100 MiB unbuffered in 10 files of 10 MiB
    (one file's cap, RLIMIT_FSIZE, is 20 MiB here) as `open_file(i)` opens them, prints how much
    it wrote, and holds everything open for `hold` seconds."""
    return (f"python3 - <<'EOF'\nimport os, time\nwritten, held = 0, []\n{prelude}\n"
            "try:\n    for i in range(10):\n        f = open_file(i)\n        held.append(f)\n"
            "        for _ in range(10):\n            written += f.write(b'x' * (1 << 20))\n"
            "except OSError as error:\n    print('stopped:', error.strerror)\n"
            f"print('written', written >> 20, 'MiB', flush=True)\ntime.sleep({hold})\nEOF")


# Issue 21: the watchdog's path walk skipped what it could not name (191 MB written under
# storage_mb = 20) and no walk sees a file deleted while open (570 MB held under 20).
WALKAROUNDS = {
    "nested past PATH_MAX": ("os.makedirs('/app/deep'); os.chdir('/app/deep')\n"
                             "for _ in range(2200):\n    os.mkdir('aa'); os.chdir('aa')\n"
                             "open_file = lambda i: open(f'f{i}', 'wb', buffering=0)"),
    "deleted while open": ("def open_file(i):\n    f = open(f'/app/h{i}', 'wb', buffering=0)\n"
                           "    os.unlink(f'/app/h{i}')\n    return f"),
}


@needs_root
@pytest.mark.parametrize("how", list(WALKAROUNDS))
def test_the_storage_cap_counts_what_no_walk_sees(tmp_path, how):
    task = limited_task(tmp_path, storage_mb=20)
    result, [out] = attack(tmp_path, task, _writer(WALKAROUNDS[how], hold=0))
    written = int(re.search(r"written (\d+) MiB", out).group(1))
    assert "No space left on device" in out and written <= 20, out
    assert result.outcome.value == "pass"


@pytest.mark.parametrize("how", list(WALKAROUNDS))
def test_without_a_volume_the_watchdog_sees_them_too(tmp_path, monkeypatch, how):
    """Where no volume can be mounted (here: as if none could), the watchdog walks by directory
    descriptors, at any depth, and counts the deleted files the command's processes hold open:
    the command is killed (it would hold its 100 MiB for 60 s)."""
    monkeypatch.setattr("evoharness.tasks.sandbox.bwrap.Volume.create", lambda *args, **kwargs: None)
    task = limited_task(tmp_path, storage_mb=20)
    _, [out] = attack(tmp_path, task, _writer(WALKAROUNDS[how], hold=60))
    assert "grew past the task's disk limit" in out, out


@needs_root
def test_a_file_count_bomb_stops_at_the_file_cap(tmp_path):
    (tmp_path / "app").mkdir()
    box = BwrapSandbox(tmp_path / "app", limits=Limits(max_files=2000))
    try:
        # Endless, so the watchdog's poll comes before it ends however fast the machine is.
        done = box.exec("i=0; while :; do i=$((i+1)); : > /app/f$i; done; echo finished",
                        timeout=300)
    finally:
        box.close()
    assert done.exit_reason == "disk_limit" and "finished" not in done.output


@needs_root
def test_cpus_cap_the_cpu_time(tmp_path):
    """cpus = 0.1: a 2-second busy loop gets at most ~0.2 s of CPU from the cgroup quota. The
    bound of 1 s leaves a 5x margin; a missing quota shows unless the machine gives the loop
    under half a core."""
    task = limited_task(tmp_path, cpus="0.1")
    result, [out] = attack(tmp_path, task,
                           "timeout 2 sh -c 'while :; do :; done'; "
                           "python3 -c 'import resource as r; u = r.getrusage(r.RUSAGE_CHILDREN); "
                           "print(\"cpu\", u.ru_utime + u.ru_stime)'")
    assert 0 <= float(re.search(r"cpu ([\d.]+)", out).group(1)) < 1.0, out


def test_tmp_and_home_do_not_outlive_a_command(tmp_path):
    task = user_task(tmp_path, test_sh=PASS_TEST_SH)
    _, [_, seen] = attack(tmp_path, task,
                          "echo x > /tmp/left; mkdir /tmp/dir; echo 'echo hi' > ~/.bashrc",
                          f"ls -d /tmp/left /tmp/dir ~/.bashrc 2>/dev/null | wc -l; {LEFT_IN_TMP}")
    assert seen.split("[exit")[0].split() == ["0", "0"]


@needs_root
def test_the_agent_runs_as_its_user_and_the_verifier_as_another(tmp_path, sandbox_factory):
    test_sh = ('#!/bin/bash\n[ "$(id -u)" != "$(cat /app/agent_uid)" ] && [ "$(whoami)" != agent ] '
               '&& [ "$(stat -c %u /app)" = "$(id -u)" ] && echo 1 > /logs/verifier/reward.txt\n')
    task = user_task(tmp_path, test_sh=test_sh, replace={"[agent]\n": '[agent]\nuser = "agent"\n'})
    result, [who] = attack(tmp_path, task, "whoami; id -u > /app/agent_uid; id -u",
                           factory=sandbox_factory)
    assert who.startswith("agent\n") and int(who.split()[1]) != 0
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail


def test_a_separate_verifier_sees_only_the_declared_artifacts(tmp_path, sandbox_factory):
    test_sh = ('#!/bin/bash\n[ -f /app/out.txt ] && [ ! -e /app/evil.py ] && [ ! -e /app/fifo ] '
               '&& echo 1 > /logs/verifier/reward.txt\n')
    task = user_task(tmp_path, test_sh=test_sh, toml='[verifier.env]\nX = "1"\n',
                     replace={"[verifier]\n": '[verifier]\nenvironment_mode = "separate"\n',
                              'version = "1.0"\n': 'version = "1.0"\nartifacts = ["/app/out.txt", "/app/fifo"]\n'})
    result, _ = attack(tmp_path, task, "echo ok > out.txt; echo 'import os' > evil.py; mkfifo fifo",
                       factory=sandbox_factory)
    assert (result.outcome.value, result.reward) == ("pass", 1.0), result.verifier_tail
    assert "artifact entries refused" in result.verifier_tail  # the FIFO


# allow_internet: out through slirp4netns, never to the host's own services.

@pytest.fixture
def host_listener():
    """A TCP server on the host's loopback and an abstract UNIX socket, counting connections."""
    seen: list[str] = []
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX)
    name = f"\0evo-redteam-{uuid.uuid4().hex[:8]}"
    unix.bind(name)
    for server in (tcp, unix):
        server.listen()
        threading.Thread(target=lambda s=server: _accept(s, seen), daemon=True).start()
    yield tcp.getsockname()[1], name[1:], seen
    tcp.close()
    unix.close()


def _accept(server: socket.socket, seen: list[str]) -> None:
    try:
        while True:
            conn, _ = server.accept()
            seen.append("connected")
            conn.close()
    except OSError:
        return


@needs_root
def test_internet_does_not_open_the_hosts_loopback_or_abstract_sockets(tmp_path, host_listener,
                                                                        sandbox_factory):
    """In a container (whose test image has no Python) bash probes the loopback; the abstract
    sockets are the host network namespace's, which the container does not share either."""
    port, abstract, seen = host_listener
    task = limited_task(tmp_path, allow_internet="true")
    probe = ("python3 - <<'EOF'\nimport socket\n"
             f"for host in ('127.0.0.1', '10.0.2.2'):\n"
             f"    try:\n        socket.create_connection((host, {port}), timeout=3); print('reached', host)\n"
             "    except OSError as e:\n        print('blocked', host, type(e).__name__)\n"
             "s = socket.socket(socket.AF_UNIX)\n"
             f"try:\n    s.connect('\\0{abstract}'); print('reached abstract')\n"
             "except OSError as e:\n    print('blocked abstract', type(e).__name__)\nEOF")
    probes = 3
    if sandbox_factory is not BwrapSandbox.for_task:
        probe, probes = (f"for h in 127.0.0.1 10.0.2.2; do (exec 3<>/dev/tcp/$h/{port}) "
                         "2>/dev/null && echo reached $h || echo blocked $h; done"), 2
    result, [_, out] = attack(tmp_path, task, "cat /proc/net/dev", probe, factory=sandbox_factory)
    assert "reached" not in out and out.count("blocked") == probes, out
    assert seen == []
    assert result.outcome.value == "pass", (result.exit_reason, result.verifier_tail[-500:])


@pytest.fixture
def outside_server(tmp_path):
    """A stand-in for the internet: an HTTP server in a network namespace of its own, reached
    from the host's namespace over a veth pair (this machine has no internet).

    The namespace is held by a process (`unshare --net`), entered with `nsenter`, and dies with
    it. Named namespaces (`ip netns add`, `ip -n`, `ip netns exec`) were not: each of those
    remounts /run/netns or /sys in a mount namespace of its own, and with a second copy of the
    suite doing the same on the machine, `ip` exited 255 now and then (stops 30 and 32)."""
    veth = f"evo{uuid.uuid4().hex[:6]}"
    # A subnet of its own: a second copy of the suite running beside this one (another checkout,
    # CI) must not meet the same addresses in the host's namespace (10.200-250, clear of
    # podman's 10.88/16).
    net = f"10.{random.randint(200, 250)}.{random.randint(0, 255)}.{4 * random.randint(0, 63)}"
    host, inside = net[:net.rindex(".") + 1], int(net.rsplit(".", 1)[1])
    host_ip, server_ip = f"{host}{inside + 1}", f"{host}{inside + 2}"
    (tmp_path / "www").mkdir()
    (tmp_path / "www" / "index.html").write_text("hello from outside\n")
    holder = subprocess.Popen(["unshare", "--net", "--", "sleep", "infinity"])
    server = None
    try:
        netns = _own_netns(holder)
        inside_ns = ["nsenter", f"--net={netns}", "--"]
        setup = [["ip", "link", "add", veth, "type", "veth", "peer", "name", "eth0",
                  "netns", str(holder.pid)],
                 ["ip", "addr", "add", f"{host_ip}/30", "dev", veth],
                 ["ip", "link", "set", veth, "up"],
                 [*inside_ns, "ip", "addr", "add", f"{server_ip}/30", "dev", "eth0"],
                 [*inside_ns, "ip", "link", "set", "eth0", "up"],
                 [*inside_ns, "ip", "link", "set", "lo", "up"]]
        for command in setup:
            done = subprocess.run(command, capture_output=True, text=True)
            assert done.returncode == 0, f"{' '.join(command)}: {done.returncode} {done.stderr}"
        server_log = tmp_path / "server.log"
        with server_log.open("w") as log:  # kept for the assertion: why the server failed
            server = subprocess.Popen([*inside_ns, "python3", "-m", "http.server", "8080",
                                       "--bind", server_ip, "-d", str(tmp_path / "www")],
                                      stdout=subprocess.DEVNULL, stderr=log)
        _wait_listening(server_ip, 8080, server, server_log)
        yield f"http://{server_ip}:8080/index.html"
    finally:
        for process in (server, holder):
            if process is not None:
                process.kill()
                process.wait()
        subprocess.run(["ip", "link", "del", veth], capture_output=True)  # gone with the ns


def _own_netns(holder: subprocess.Popen) -> str:
    """The holder's network namespace, once `unshare` has made it (Popen returns before)."""
    ours, theirs = os.readlink("/proc/self/ns/net"), f"/proc/{holder.pid}/ns/net"
    for _ in range(600):  # a safety net: unshare is normally done in milliseconds
        assert holder.poll() is None, f"unshare --net exited {holder.returncode}"
        if os.readlink(theirs) != ours:
            return theirs
        threading.Event().wait(0.05)
    raise AssertionError("unshare --net never made its namespace")


def _wait_listening(host: str, port: int, server: subprocess.Popen, log: Path) -> None:
    for _ in range(600):  # a safety net: the server is normally up in well under a second
        assert server.poll() is None, f"the stand-in server died: {log.read_text()}"
        try:
            socket.create_connection((host, port), timeout=1).close()
            return
        except OSError:
            threading.Event().wait(0.05)
    raise AssertionError("the stand-in server never listened")


@needs_root
def test_internet_reaches_an_outside_server(tmp_path, outside_server):
    task = limited_task(tmp_path, allow_internet="true")
    fetch = f"python3 -c \"import urllib.request as u; print(u.urlopen('{outside_server}', timeout=10).read())\""
    _, [out] = attack(tmp_path, task, fetch)
    assert "hello from outside" in out, out


@needs_root
def test_without_internet_the_outside_server_is_unreachable(tmp_path, outside_server):
    task = user_task(tmp_path, test_sh=PASS_TEST_SH)
    fetch = f"python3 -c \"import urllib.request as u; print(u.urlopen('{outside_server}', timeout=5).read())\""
    _, [out] = attack(tmp_path, task, fetch)
    assert "hello from outside" not in out and "unreachable" in out, out


@needs_root
def test_each_commands_cgroup_goes_with_it(tmp_path, monkeypatch):
    made, create = [], Cgroup.create

    def recording(limits):
        made.append(create(limits))
        return made[-1]
    monkeypatch.setattr("evoharness.tasks.sandbox.bwrap.Cgroup.create", recording)
    box = BwrapSandbox(tmp_path, limits=Limits(memory_mb=128))
    try:
        box.exec("sleep 300 & echo started", timeout=20)
    finally:
        box.close()
    [group] = made
    assert group is not None, "as root on this machine a cgroup must be made"
    assert not any(d.exists() for d in group.dirs.values())
    assert (group.dirs["memory"] if not group.v2 else group.dirs["unified"]).parent.exists()


@needs_root
def test_every_internet_command_gets_its_network(tmp_path):
    """slirp4netns attaches only once bwrap has set up the namespace's loopback: attaching earlier
    failed about one command in six ("loopback: Failed RTM_NEWADDR"), so 40 in a row all passing
    by luck would have had odds of about 1 in 3,000 (0.82 ** 40)."""
    box = BwrapSandbox(tmp_path, allow_internet=True)
    try:
        reasons = [box.exec("true", timeout=60).exit_reason for _ in range(40)]
    finally:
        box.close()
    assert set(reasons) == {"exited"}, reasons
