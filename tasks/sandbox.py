"""Where task commands run: a bubblewrap sandbox per rollout (the task's files writable at /app,
the system read-only, a private network namespace, own PID namespace, a fresh /tmp per command,
a cgroup and rlimits, a disk watchdog, capped output, group kill on timeout). What runs in it
(agent tools, verifier, oracle) is decided by its callers."""
from __future__ import annotations

import os
import random
import resource
import shutil
import sys
import tempfile
from pathlib import Path

import psutil
from pydantic import BaseModel, ConfigDict

from agent.environment import ExecResult
from tasks.capture import Hooks, run_capped
from tasks.limits import Cgroup, Limits, chown_tree, cpu_set, disk_watchdog, rlimits
from tasks.network import DNS, UserNetwork, require_slirp
from tasks.task import Task

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
    in a cgroup of its own. `handover` gives the same /app to a new identity (the verifier)."""

    def __init__(self, app_dir: Path, *, harness_dir: Path | None = None,
                 allow_internet: bool = False, limits: Limits = Limits(),
                 agent_user: str | int | None = None, owns_app: bool = True) -> None:
        self.app_dir = Path(app_dir)
        self.owns_app = owns_app  # close() deletes it
        self.harness_dir = harness_dir
        self.allow_internet = allow_internet
        self.slirp = require_slirp() if allow_internet else None
        self.limits = limits
        self.root = privileged()
        self.uid = random.randrange(10**6, 10**9) if self.root else os.getuid()
        self._chown(self.app_dir)
        self.private: Path | None = None  # a directory for the sandbox's own /etc files
        self.etc = self._etc_files(agent_user)

    @classmethod
    def for_task(cls, task: Task, *, harness_dir: Path | None = None,
                 limits: Limits | None = None) -> "BwrapSandbox":
        """A fresh copy of the task's environment/ (minus the Dockerfile) as /app."""
        return cls(copy_task_files(task), harness_dir=harness_dir,
                   allow_internet=task.config.environment.allow_internet,
                   agent_user=task.config.agent.user, limits=limits or task_limits(task))

    def fresh_copy(self, task: Task) -> Path:
        """A new private copy of the task's /app as it starts (a separate verifier's)."""
        return copy_task_files(task)

    def handover(self, app_dir: Path) -> "BwrapSandbox":
        """A sandbox with the same limits and network over `app_dir` for a new user (a fresh uid
        as root): nothing this sandbox's user left running can touch it, or run in it."""
        self.kill_leftovers()
        return BwrapSandbox(app_dir, allow_internet=self.allow_internet, limits=self.limits,
                            owns_app=Path(app_dir) != self.app_dir)

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
        self.private = Path(tempfile.mkdtemp(prefix="evo-box-"))
        self.private.chmod(0o755)
        files = {name: self.private / name for name in texts}
        for name, path in files.items():
            path.write_text(texts[name])
            path.chmod(0o644)
        return files

    def _chown(self, path: Path) -> None:
        if self.root:
            chown_tree(path, self.uid)

    def writable_dir(self, name: str) -> Path:
        """A fresh host directory the sandbox's user may write (e.g. /logs/verifier)."""
        path = Path(tempfile.mkdtemp(prefix=f"evo-{name}-"))
        self._chown(path)
        return path

    def _argv(self, command: list[str], mounts: list[Mount], env: dict[str, str],
              network: UserNetwork | None) -> list[str]:
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
                 "--chdir", APP, "--clearenv", *_env_args({**base, **env})]
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
        """Kills a command that takes /app (and other writable mounts) past the storage cap or
        the file-count cap; one that frees space is left alone."""
        return disk_watchdog([self.app_dir, *(m.source for m in mounts if m.writable)],
                             self.limits)

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
        hooks = Hooks(env=BWRAP_ENV, watchdog=self._disk_watchdog(mounts),
                      pass_fds=network.child_fds if network else (),
                      started=network.attach if network else None)
        try:
            result = run_capped(self._argv(argv, mounts, env or {}, network), stdin=stdin,
                                timeout=timeout, limits=self.limits,
                                preexec=self._preexec(cgroup), hooks=hooks)
            out_of_memory = cgroup is not None and cgroup.oom_kills() > 0
        finally:
            if network is not None:
                network.close()
            if cgroup is not None:
                cgroup.remove()  # kills what is left in it first
        self.kill_leftovers()
        if result.exit_reason == "exited" and result.output.startswith("bwrap: "):
            return result.model_copy(update={"exit_reason": "sandbox_error"})
        if out_of_memory:
            return result.model_copy(update={"exit_reason": "memory_limit"})
        return result

    def kill_leftovers(self) -> int:
        """Kill any process still running as this sandbox's private uid; returns how many. A
        command's PID namespace dies with it, but the kernel tears it down asynchronously: this
        also waits for the last of a fork bomb's processes to go."""
        if not self.root:
            return 0  # no private uid; the PID namespace took them down
        found = [p for p in psutil.process_iter(["uids"]) if p.info["uids"].real == self.uid]
        for proc in found:
            try:
                proc.kill()
            except psutil.NoSuchProcess:
                pass
        psutil.wait_procs(found, timeout=5)
        return len(found)

    def close(self) -> None:
        """Kill what is left and delete the sandbox's files."""
        self.kill_leftovers()
        if self.owns_app:
            shutil.rmtree(self.app_dir, ignore_errors=True)
        if self.private is not None:
            shutil.rmtree(self.private, ignore_errors=True)


def task_limits(task: Task) -> Limits:
    """The limits task.toml's [environment] asks for (bounded by this machine when loaded)."""
    env = task.config.environment
    return Limits(memory_mb=env.memory_mb, storage_mb=env.storage_mb, cpus=env.cpus)


def copy_task_files(task: Task) -> Path:
    """A private writable copy of environment/ without the Dockerfile: the task's /app."""
    app = Path(tempfile.mkdtemp(prefix=f"evo-app-{task.id}-"))
    if task.environment_dir.is_dir():
        shutil.copytree(task.environment_dir, app, dirs_exist_ok=True, symlinks=True,
                        ignore=shutil.ignore_patterns("Dockerfile", ".dockerignore"))
    return app
