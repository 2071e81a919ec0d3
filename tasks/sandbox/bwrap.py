"""Where task commands run: a bubblewrap sandbox per rollout (the task's files writable at /app,
on a size-capped volume of its own as root, the system read-only, a private network namespace,
own PID namespace, a fresh /tmp per command, a cgroup and rlimits, a disk watchdog where no
volume caps, capped output, group kill on timeout), and bwrap's own report of whether it started
each command. What runs in it (agent tools, verifier, oracle) is decided by its callers."""
from __future__ import annotations

import json
import os
import random
import resource
import shutil
import sys
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

from evoharness.agent.environment import ExecResult
from evoharness.tasks.sandbox.leftovers import owned_dir
from evoharness.tasks.sandbox.capture import Hooks, run_capped
from evoharness.tasks.sandbox.host_python import hidden_suites
from evoharness.tasks.sandbox.host_files import chown_tree, copy_tree, remove_tree, tree_size
from evoharness.tasks.sandbox.limits import Cgroup, Limits, cpu_set, disk_watchdog, rlimits
from evoharness.tasks.sandbox.network import DNS, UserNetwork, require_slirp
from evoharness.tasks.task import Task
from evoharness.tasks.sandbox.volume import Volume

APP = "/app"
HARNESS = "/harness"
# System paths a task needs to run shell tools and Python; everything else on the host is absent.
_ETC = ["passwd", "group", "nsswitch.conf", "hosts", "ld.so.cache", "ld.so.conf", "ld.so.conf.d",
        "alternatives", "localtime"]
_TOP = ["bin", "sbin", "lib", "lib32", "lib64"]
# bwrap itself starts with this environment only: nothing of the host's (API keys) reaches the
# sandbox, not even through /proc/1/environ of its init process.
BWRAP_ENV = {"PATH": "/usr/bin:/bin"}

__all__ = ["APP", "HARNESS", "BwrapSandbox", "Limits", "Mount", "copy_task_files", "task_limits"]


class LaunchStatus:
    """bwrap's own report on a pipe (--json-status-fd): it writes the command's exit code only
    once it has started the command, so its absence, not any text the command can print, tells
    that the sandbox failed to start (a mount it could not make, a missing binary)."""

    def __init__(self) -> None:
        self.read_fd, self.fd = os.pipe()
        os.set_blocking(self.read_fd, False)

    def bwrap_args(self) -> list[str]:
        return ["--json-status-fd", str(self.fd)]

    def started(self) -> None:
        """After bwrap started: it holds the write end now."""
        if self.fd >= 0:
            os.close(self.fd)
            self.fd = -1

    def exit_code(self) -> int | None:
        """The command's exit code as bwrap reported it; None when it never started it."""
        data = b""
        try:
            while chunk := os.read(self.read_fd, 65536):
                data += chunk
        except BlockingIOError:
            pass  # whatever bwrap wrote before it exited is in the pipe already
        for line in data.decode(errors="replace").splitlines():
            try:
                report = json.loads(line)
            except ValueError:
                continue
            if isinstance(report, dict) and isinstance(report.get("exit-code"), int):
                return report["exit-code"]
        return None

    def close(self) -> None:
        self.started()
        os.close(self.read_fd)


class Mount(BaseModel):
    model_config = ConfigDict(frozen=True)

    source: Path
    dest: str
    writable: bool = False


def _system_binds(etc: dict[str, Path]) -> list[str]:
    """Read-only system dirs and the /etc files a task needs; `etc` replaces some of them."""
    args = ["--ro-bind", "/usr", "/usr"]
    for name in _TOP:
        path = Path("/") / name
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), str(path)]
        elif path.exists():
            args += ["--ro-bind", str(path), str(path)]
    args += ["--perms", "0755", "--dir", "/etc"]
    for name in sorted(set(_ETC) | set(etc)):
        source = etc.get(name, Path("/etc") / name)
        if source.exists():
            args += ["--ro-bind", str(source), f"/etc/{name}"]
    return args


def _dirs_for(dest: str) -> list[str]:
    # bwrap makes a bind's missing parents 0700 for root; a dropped uid could not traverse them.
    parents = [str(p) for p in reversed(Path(dest).parents) if str(p) not in ("/", "/usr")]
    return [a for p in parents for a in ("--perms", "0755", "--dir", p)]


def _env_args(env: dict[str, str]) -> list[str]:
    return [a for key, value in env.items() for a in ("--setenv", key, value)]


def privileged() -> bool:
    """Root: commands run as a fresh uid in a cgroup; otherwise in a user namespace as the user."""
    return os.geteuid() == 0


class BwrapSandbox:
    """One rollout's sandbox over a private copy of the task's files, used for many commands.

    As root the commands run as a fresh unprivileged uid (RLIMIT_NPROC does not apply to root,
    and a per-sandbox uid makes the process limit and the files this sandbox's own), each command
    in a cgroup of its own. `handover` gives the same /app to a new identity (the verifier).
    `volume`: the size-capped filesystem /app lives on (volume.py), else the watchdog caps it."""

    def __init__(self, app_dir: Path, *, harness_dir: Path | None = None,
                 allow_internet: bool = False, limits: Limits = Limits(),
                 agent_user: str | int | None = None, owns_app: bool = True,
                 volume: Volume | None = None) -> None:
        self.app_dir = Path(app_dir)
        self.owns_app = owns_app  # close() deletes it (and its volume)
        self.volume = volume
        self.harness_dir = harness_dir
        self.allow_internet = allow_internet
        self.slirp = require_slirp() if allow_internet else None
        self.limits = limits
        self.root = privileged()
        self.uid = random.randrange(10**6, 10**9) if self.root else os.getuid()
        # A process of the private uid may run outside any command's cgroup (none could be made,
        # or one outlived its kill): only then does kill_leftovers() look through every process.
        self.strays_possible = False
        self._chown(self.app_dir)
        self.private: Path | None = None  # a directory for the sandbox's own /etc files
        self.etc = self._etc_files(agent_user)

    @classmethod
    def for_task(cls, task: Task, *, harness_dir: Path | None = None,
                 limits: Limits | None = None) -> "BwrapSandbox":
        """A fresh copy of the task's environment/ (minus the Dockerfile) as /app, on a volume
        of its own where this machine can mount one."""
        limits = limits or task_limits(task)
        source = task.environment_dir
        volume = Volume.create(limits, holds=tree_size(source) if source.is_dir() else (0, 0)) \
            if privileged() else None
        try:
            app = copy_task_files(task, into=volume.app if volume else None)
            if volume is not None:
                volume.seal()
            return cls(app, harness_dir=harness_dir,
                       allow_internet=task.config.environment.allow_internet,
                       agent_user=task.config.agent.user, limits=limits, volume=volume)
        except BaseException:
            if volume is not None:
                volume.close()
            raise

    def fresh_copy(self, task: Task) -> Path:
        """A new private copy of the task's /app as it starts (a separate verifier's)."""
        return copy_task_files(task)

    def handover(self, app_dir: Path) -> "BwrapSandbox":
        """A sandbox with the same limits and network over `app_dir` for a new user (a fresh uid
        as root): nothing this sandbox's user left running can touch it, or run in it. The same
        /app keeps its volume; another one (a separate verifier's) moves onto a volume of its own
        when this sandbox has one. UnusableFiles when the files cannot be handed over."""
        self.kill_leftovers()
        if Path(app_dir) == self.app_dir:
            return BwrapSandbox(app_dir, allow_internet=self.allow_internet, limits=self.limits,
                                owns_app=False, volume=self.volume)
        volume = self._volume_for(Path(app_dir)) if self.volume is not None else None
        try:
            return BwrapSandbox(volume.app if volume else app_dir,
                                allow_internet=self.allow_internet, limits=self.limits,
                                volume=volume)
        except BaseException:
            if volume is not None:
                volume.close()
            raise

    def _volume_for(self, app_dir: Path) -> Volume | None:
        """`app_dir`'s files moved onto a new volume (None, and left where they are, where none
        can be made)."""
        volume = Volume.create(self.limits, holds=tree_size(app_dir))
        if volume is None:
            return None
        try:
            copy_tree(app_dir, volume.app)
            volume.seal()
        except BaseException:
            volume.close()
            raise
        remove_tree(app_dir)
        return volume

    def _etc_files(self, agent_user: str | int | None) -> dict[str, Path]:
        texts: dict[str, str] = {}
        if agent_user is not None:  # Harbor's agent.user: the name the agent sees for its uid
            name = agent_user if isinstance(agent_user, str) else f"agent{agent_user}"
            texts["passwd"] = f"{name}:x:{self.uid}:{self.uid}::/tmp:/bin/bash\n"
            texts["group"] = f"{name}:x:{self.uid}:\n"
            texts = {table: line + Path(f"/etc/{table}").read_text() for table, line in texts.items()}
        if self.allow_internet:
            texts["resolv.conf"] = f"nameserver {DNS}\n"
        if not texts:
            return {}
        self.private = owned_dir("box")
        self.private.chmod(0o755)
        files = {name: self.private / name for name in texts}
        for name, path in files.items():
            path.write_text(texts[name])
            path.chmod(0o644)
        return files

    def _chown(self, path: Path) -> None:
        """Give `path`'s tree (links themselves, never what they point at) to this sandbox's uid."""
        if self.root:
            chown_tree(path, self.uid)

    def writable_dir(self, name: str) -> Path:
        """A fresh host directory the sandbox's user may write (e.g. /logs/verifier)."""
        path = owned_dir(name)
        self._chown(path)
        return path

    def _argv(self, command: list[str], mounts: list[Mount], env: dict[str, str],
              network: UserNetwork | None, status: LaunchStatus) -> list[str]:
        python_dirs = sorted({sys.prefix, sys.base_prefix})
        # /tmp is memory: half the sandbox's, as the kernel gives a tmpfs half the RAM, so a full
        # /tmp leaves the processes room (the cgroup counts both).
        tmp_mb = min(self.limits.memory_mb // 2, self.limits.storage_mb)
        # /tmp first: the Python and the mounts may live under the host's /tmp (a CI checkout),
        # and a tmpfs mounted after them would hide them.
        args = ["bwrap", *_system_binds(self.etc), "--proc", "/proc", "--dev", "/dev",
                "--perms", "1777", "--size", str(tmp_mb << 20), "--tmpfs", "/tmp"]
        for path in python_dirs:
            args += [*_dirs_for(path), "--ro-bind", path, path]
        for hidden in hidden_suites(python_dirs):  # an installed suite's hidden tests
            args += ["--perms", "0555", "--tmpfs", hidden]
        all_mounts = [Mount(source=self.app_dir, dest=APP, writable=True), *mounts]
        if self.harness_dir is not None:
            all_mounts.append(Mount(source=self.harness_dir, dest=HARNESS))
        for m in all_mounts:
            args += [*_dirs_for(m.dest), "--bind" if m.writable else "--ro-bind",
                     str(m.source), m.dest]
        base = {"HOME": "/tmp", "LANG": "C.UTF-8",
                "PATH": f"{sys.prefix}/bin:/usr/local/bin:/usr/bin:/bin"}
        args += ["--unshare-ipc", "--unshare-pid", "--unshare-uts", "--unshare-cgroup-try",
                 "--unshare-net", "--hostname", "sandbox", "--die-with-parent", "--new-session",
                 "--chdir", APP, "--clearenv", *_env_args({**base, **env}), *status.bwrap_args()]
        if network is not None:
            args += network.bwrap_args()
        if self.root:
            return args + ["--", "setpriv", f"--reuid={self.uid}", f"--regid={self.uid}",
                           "--clear-groups", "--no-new-privs", "--bounding-set=-all",
                           "--inh-caps=-all", "--", *command]
        return args + ["--unshare-user", "--", *command]

    def _preexec(self, cgroup: Cgroup | None):
        limits = rlimits(self.limits)
        nproc = self.limits.nproc
        if not self.root:
            # Without a private uid the count covers all of the user's processes.
            nproc += sum(1 for p in psutil.process_iter(["uids"]) if p.info["uids"].real == self.uid)
        cpus = None if cgroup is not None and cgroup.caps_cpu else cpu_set(self.limits.cpus)

        def apply() -> None:
            for kind, value in [*limits, (resource.RLIMIT_NPROC, nproc)]:
                resource.setrlimit(kind, (value, value))
            if cgroup is not None:
                cgroup.join()
            if cpus is not None:
                os.sched_setaffinity(0, cpus)
        return apply

    def _disk_watchdog(self, mounts: list[Mount]):
        """Kills a command that takes the writable directories no volume caps (/app without one,
        /logs/verifier) past the storage cap or the file-count cap, counting files its processes
        hold open after deleting them; one that frees space is left alone."""
        paths = [m.source for m in mounts if m.writable]
        if self.volume is None:
            paths.insert(0, self.app_dir)
        return disk_watchdog(paths, self.limits)

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        """Run `bash -c command` in /app; extra mounts (e.g. /tests) only for this command."""
        return self.run(["bash", "-c", command], timeout=timeout, stdin=stdin, mounts=mounts,
                        env=env)

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """Run a harness script (relative to the harness dir) with python3, cwd /app."""
        return self.run(["python3", f"{HARNESS}/{script}"], timeout=timeout, stdin=stdin)

    def run(self, argv: list[str], *, timeout: float, stdin: str = "",
            mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        """Run argv in /app. `env` adds variables (as environment, never as shell text)."""
        mounts = mounts or []
        network = UserNetwork(self.slirp, user_namespace=not self.root) if self.slirp else None
        cgroup = Cgroup.create(self.limits) if self.root else None
        status = LaunchStatus()

        def started() -> None:
            status.started()
            if network is not None:
                network.attach()
        hooks = Hooks(env=BWRAP_ENV, watchdog=self._disk_watchdog(mounts), started=started,
                      pass_fds=(status.fd, *(network.child_fds if network else ())))
        try:
            result = run_capped(self._argv(argv, mounts, env or {}, network, status),
                                stdin=stdin, timeout=timeout, limits=self.limits,
                                preexec=self._preexec(cgroup), hooks=hooks)
            out_of_memory = cgroup is not None and cgroup.oom_kills() > 0
            never_started = status.exit_code() is None
        finally:
            status.close()
            if network is not None:
                network.close()
            if cgroup is None or not cgroup.remove():  # kills what is left in it first
                self.strays_possible = True
        self.kill_leftovers()
        # bwrap alone says whether it failed: an exit of its own that reports no command started
        # (whatever the output says; the command can print anything, "bwrap: ..." included).
        if result.exit_reason == "exited" and never_started:
            return result.model_copy(update={"exit_reason": "sandbox_error"})
        if out_of_memory:
            return result.model_copy(update={"exit_reason": "memory_limit"})
        return result

    def kill_leftovers(self) -> int:
        """Kill any process still running as this sandbox's private uid; returns how many. A
        command's PID namespace dies with it, but the kernel tears it down asynchronously: this
        also waits for the last of a fork bomb's processes to go."""
        if not self.root or not self.strays_possible:
            return 0  # no private uid (the PID namespace took them down), or every command's
            # cgroup ended empty: a process cannot leave its cgroup, so none of them is left
        found = [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == self.uid]
        for proc in found:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        _, alive = psutil.wait_procs(found, timeout=5)
        self.strays_possible = bool(alive)
        return len(found)

    def close(self) -> None:
        """Kill what is left and delete the sandbox's files."""
        self.kill_leftovers()
        if self.owns_app and self.volume is not None:
            self.volume.close()
        elif self.owns_app:
            remove_tree(self.app_dir)
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)


def task_limits(task: Task) -> Limits:
    """The limits task.toml's [environment] asks for (bounded by this machine when loaded)."""
    env = task.config.environment
    return Limits(memory_mb=env.memory_mb, storage_mb=env.storage_mb, cpus=env.cpus)


def copy_task_files(task: Task, into: Path | None = None) -> Path:
    """A private writable copy of environment/ without the Dockerfile: the task's /app (`into`, an
    empty directory, or a new one)."""
    app = into or owned_dir("app", task.id)
    if task.environment_dir.is_dir():
        shutil.copytree(task.environment_dir, app, dirs_exist_ok=True, symlinks=True,
                        ignore=shutil.ignore_patterns("Dockerfile", ".dockerignore"))
    return app
