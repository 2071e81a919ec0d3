"""A rollout's sandbox in the task's own image: one container per sandbox, started at its first
command, its first process root with no capabilities (never the agent's user), with a private
copy of the image's /app on a size-capped volume bind-mounted (so the verifier's rules, the
artifact copy and the reward reader work on host files as with bubblewrap), the harness and this
host's Python and bash read-only, no network unless the task allows it, the task's memory,
process and CPU limits, every capability dropped and no new privileges. Commands run by `exec` as
the agent's user in this host's bash; what each leaves running is killed from the host's side
(container_procs.py). Building the image is images.py's."""
from __future__ import annotations

import os
import random
import secrets
from pathlib import Path

from evoharness.agent.environment import ExecResult
from evoharness.agent.exits import CommandExit
from evoharness.tasks.sandbox.leftovers import owned_dir
from evoharness.tasks.sandbox.capture import Hooks, run_capped
from evoharness.tasks.sandbox.container_procs import ContainerProcs
from evoharness.tasks.sandbox.engine import OWNER_LABEL, Engine, engine_env, owner_label, slug
from evoharness.tasks.sandbox.host_python import PREFIX, hidden_suites, host_python
from evoharness.tasks.sandbox.images import TaskImage
from evoharness.tasks.sandbox.host_files import chown_tree, copy_tree, remove_tree, tree_size
from evoharness.tasks.sandbox.limits import Limits, disk_watchdog
from evoharness.tasks.sandbox.volume import Volume
from evoharness.tasks.sandbox.bwrap import APP, HARNESS, Mount, privileged, task_limits
from evoharness.tasks.task import Task

# Runs the command, then kills every other process of its user in the container (what it left in
# the background), as bubblewrap's PID namespace does: nothing but files outlives a command. The
# host then kills what is left of that user from its side (a wrapper the agent killed first).
_WRAPPER = '"$@"; status=$?; kill -9 -1 2>/dev/null; exit $status'
START_TIMEOUT_S = 300.0
# The image's ENV reaches every command; for the verifier none of these may lead into /app (as
# the host sandbox's clean environment guarantees): they would make it run the agent's code.
_CODE_PATHS = ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME", "PYTHONUSERBASE", "BASH_ENV", "ENV",
               "LD_PRELOAD", "LD_LIBRARY_PATH", "NODE_PATH", "NODE_OPTIONS", "PERL5LIB",
               "RUBYLIB", "RUBYOPT", "GIT_CONFIG_GLOBAL")


def verifier_env(image_env: dict[str, str]) -> dict[str, str]:
    """What the verifier's commands override of the image's environment: those variables
    emptied, and /app's directories taken off PATH."""
    path = [d for d in image_env.get("PATH", "/usr/local/bin:/usr/bin:/bin").split(":")
            if d and not (d == APP or d.startswith(f"{APP}/") or not d.startswith("/"))]
    return {"PATH": ":".join(path) or "/usr/bin:/bin", **{name: "" for name in _CODE_PATHS}}


class SandboxIdentity:
    """Who the sandbox's commands run as: uid, gid, HOME, and user/group tables to mount when
    the image does not know the name."""

    def __init__(self, image: TaskImage, agent_user: str | int | None, fresh_uid: int, *,
                 image_user: bool = True) -> None:
        wanted = agent_user if agent_user is not None or not image_user else \
            _image_user(image.user)
        users = _table(image.passwd)
        name = str(wanted).split(":")[0] if wanted is not None else ""
        self.fresh = True
        self.uid = self.gid = fresh_uid
        self.home = "/tmp"
        self.tables: dict[str, str] = {}
        if name in users and users[name][0] != 0:
            self.uid, self.gid, self.home = users[name]
            self.fresh = False
        elif name.isdigit() and int(name) != 0:
            self.uid = self.gid = int(name)
            self.fresh = False
        elif name:  # Harbor's agent.user as the name of this sandbox's fresh uid (bwrap's rule)
            self.tables = {"passwd": f"{image.passwd}{name}:x:{fresh_uid}:{fresh_uid}::/tmp:"
                                     "/bin/bash\n",
                           "group": f"{image.group}{name}:x:{fresh_uid}:\n"}


def _image_user(user: str) -> str | None:
    """The image's USER, unless it is none or root (the sandbox never runs the agent as root)."""
    name = user.split(":")[0]
    return None if name in ("", "root", "0") else user


def _table(passwd: str) -> dict[str, tuple[int, int, str]]:
    users = {}
    for line in passwd.splitlines():
        fields = line.split(":")
        if len(fields) >= 6 and fields[2].isdigit() and fields[3].isdigit():
            users[fields[0]] = (int(fields[2]), int(fields[3]), fields[5] or "/tmp")
    return users


def copy_image_app(image: TaskImage) -> Path:
    """A private copy of the image's /app (owners, modes and links kept): a sandbox's /app."""
    app = owned_dir("app", image.task_id)
    copy_tree(image.app, app)
    return app


def app_on_volume(source: Path, limits: Limits) -> Volume | None:
    """A copy of `source` as /app on a size-capped volume of its own (volume.py), as bubblewrap's
    /app: the kernel counts every block written there, files deleted while open included. None
    where this machine cannot mount one (not root): the watchdog then walks /app."""
    volume = Volume.create(limits, holds=tree_size(source)) if privileged() else None
    if volume is None:
        return None
    try:
        copy_tree(source, volume.app)
        volume.seal()
    except BaseException:
        volume.close()
        raise
    return volume


class ContainerSandbox:
    """A Sandbox (tasks/sandbox/protocol.py) in a container of `image`. Its mounts are fixed when the
    container starts (at the first command): a later command asking for others is refused. A
    `verifier` sandbox runs as a fresh uid whatever the image's USER, with verifier_env's
    overrides."""

    def __init__(self, engine: Engine, image: TaskImage, app_dir: Path, *, task_id: str,
                 harness_dir: Path | None = None, allow_internet: bool = False,
                 limits: Limits = Limits(), agent_user: str | int | None = None,
                 owns_app: bool = True, verifier: bool = False,
                 volume: Volume | None = None) -> None:
        self.engine = engine
        self.image = image  # tasks with the same files share it: names use `task_id`
        self.task_id = task_id
        self.app_dir = Path(app_dir)
        self.harness_dir = harness_dir
        self.allow_internet = allow_internet
        self.limits = limits
        self.owns_app = owns_app
        self.volume = volume  # the filesystem app_dir lives on, where there is one (its own)
        self.start_dir = image.app  # what /app held at the start (tasks/left_behind.py)
        self.name = f"evo-{slug(task_id)}-{secrets.token_hex(5)}"
        # As root a fresh uid per sandbox, as with bubblewrap; otherwise the user's own, which
        # rootless podman maps into the container with --userns=keep-id.
        fresh_uid = random.randrange(10**6, 10**9) if privileged() else os.getuid()
        self.identity = SandboxIdentity(image, agent_user, fresh_uid, image_user=not verifier)
        self.overrides = verifier_env(image.env) if verifier else {}
        if self.identity.fresh and privileged():
            chown_tree(self.app_dir, self.identity.uid)
        self.private: Path | None = None
        self.mounts: list[Mount] | None = None  # the container's, once started
        self.upper: Path | None = None  # the container's own writable layer on this host
        self.procs = ContainerProcs(0)  # the running container's, from the host's side
        self.oom_kills = 0

    @classmethod
    def for_task(cls, task: Task, image: TaskImage, engine: Engine, *,
                 harness_dir: Path | None = None, limits: Limits | None = None
                 ) -> "ContainerSandbox":
        limits = limits or task_limits(task)
        volume = app_on_volume(image.app, limits)
        try:
            return cls(engine, image, volume.app if volume else copy_image_app(image),
                       task_id=task.id, harness_dir=harness_dir,
                       allow_internet=task.config.environment.allow_internet,
                       agent_user=task.config.agent.user, limits=limits, volume=volume)
        except BaseException:
            if volume is not None:
                volume.close()
            raise

    def fresh_copy(self, task: Task) -> Path:
        return copy_image_app(self.image)

    def handover(self, app_dir: Path) -> "ContainerSandbox":
        """A sandbox in a new container over `app_dir` for a fresh uid: this one's container
        (and every process in it) is gone first. The same /app keeps its volume; another (a
        separate verifier's) moves onto a volume of its own."""
        self.kill_leftovers()
        same = Path(app_dir) == self.app_dir
        volume = None if same or self.volume is None else app_on_volume(Path(app_dir), self.limits)
        if volume is not None:
            remove_tree(Path(app_dir))
        try:
            return ContainerSandbox(self.engine, self.image, volume.app if volume else app_dir,
                                    task_id=self.task_id, allow_internet=self.allow_internet,
                                    limits=self.limits, owns_app=not same, verifier=True,
                                    volume=self.volume if same else volume)
        except BaseException:
            if volume is not None:
                volume.close()
            raise

    def writable_dir(self, name: str) -> Path:
        path = owned_dir(name)
        if privileged():
            chown_tree(path, self.identity.uid)  # a verifier's: a fresh uid, its own gid
        return path

    def exec(self, command: str, *, timeout: float, stdin: str = "",
             mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        """`bash -c command` with this host's bash (host_python.py): never one the image or the
        agent put on PATH."""
        return self.run([*host_python().bash, "-c", command], timeout=timeout, stdin=stdin,
                        mounts=mounts, env=env)

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        """A harness script with this host's Python (tasks/sandbox/host_python.py), cwd /app."""
        return self.run(host_python().command(f"{HARNESS}/{script}"), timeout=timeout,
                        stdin=stdin)

    def run(self, argv: list[str], *, timeout: float, stdin: str = "",
            mounts: list[Mount] | None = None, env: dict[str, str] | None = None) -> ExecResult:
        mounts = mounts or []
        failed = self._start(mounts)
        if failed is not None:
            return failed
        variables = {"HOME": self.identity.home, **self.overrides, **(env or {})}
        argv = [self.engine.binary, "exec", "-i", "--user",
                f"{self.identity.uid}:{self.identity.gid}", "--workdir", APP,
                *[a for k, v in variables.items() for a in ("-e", f"{k}={v}")],
                self.name, *host_python().bash, "-c", _WRAPPER, "evoharness", *argv]
        # /app on its volume is capped by the kernel; the rest is watched, with the deleted files
        # the container's processes (not the engine's client) still hold.
        watched = [*([] if self._capped() else [self.app_dir]),
                   *([self.upper] if self.upper else []),
                   *(m.source for m in mounts if m.writable)]
        # In the sandbox's own directory: podman's conmon leaves an `oom` file in the working
        # directory of the container's and an exec's client when the memory cgroup kills.
        result = run_capped(argv, stdin=stdin, timeout=timeout, limits=self.limits,
                            preexec=None, cwd=self._private_dir(),
                            hooks=Hooks(env=engine_env(),
                                        watchdog=disk_watchdog(
                                            watched, self.limits, pids=self.procs.pids,
                                            devices=self.procs.root_device() if self.upper
                                            else set())))
        return self._judged(result)

    def _judged(self, result: ExecResult) -> ExecResult:
        """Why the command ended, with every process it left killed. The container's first
        process is never the agent's, so a container that is gone was not ended by the agent:
        the sandbox's failure (an infra error, run again), unless its memory cgroup killed it."""
        self._kill_agent_processes()
        if result.exit_code == 137 or not self.procs.alive():
            if self._new_oom_kill():
                return result.model_copy(update={"exit_reason": CommandExit.MEMORY_LIMIT})
        if not self.procs.alive():
            return result.model_copy(update={
                "exit_reason": CommandExit.SANDBOX_ERROR,
                "output": f"{result.output}\n[{self.engine.name}: the container stopped]"})
        return result

    def _start(self, mounts: list[Mount]) -> ExecResult | None:
        """Start the container with `mounts` unless it runs; an ExecResult when it cannot."""
        if self.mounts is not None:
            if sorted(mounts, key=str) != sorted(self.mounts, key=str):
                raise ValueError("a container's mounts are fixed when it starts; this command "
                                 "asks for others")
            return None
        # conmon, which watches the container, works in this directory (see run()).
        done = self.engine.run(self._run_args(mounts), check=False, timeout=START_TIMEOUT_S,
                               cwd=self._private_dir())
        if done.returncode != 0:
            self.engine.remove([self.name])
            return ExecResult(exit_code=done.returncode, exit_reason=CommandExit.SANDBOX_ERROR,
                              output=f"{self.engine.name}: the container did not start: "
                                     f"{done.stderr.decode(errors='replace')[-1500:]}")
        self.mounts = list(mounts)
        upper, _, pid = self.engine.text(["inspect", "--format",
                                          "{{.GraphDriver.Data.UpperDir}} {{.State.Pid}}",
                                          self.name], check=False).rpartition(" ")
        self.upper = Path(upper) if upper.startswith("/") and Path(upper).is_dir() else None
        self.procs = ContainerProcs(int(pid) if pid.isdigit() else 0)
        return None

    def _run_args(self, mounts: list[Mount]) -> list[str]:
        limits = self.limits
        network = "none"
        if self.allow_internet:
            network = "slirp4netns:allow_host_loopback=false" if self.engine.name == "podman" \
                else "bridge"
        fsize = min(limits.fsize_mb, limits.storage_mb) << 20
        rootless = ["--userns=keep-id"] if self.engine.name == "podman" and not privileged() else []
        # The first process (the engine's init, then sleep) is root with no capabilities, never
        # the agent's user: the agent's `kill -9 -1` or `kill 1` cannot end the container.
        first = ["--user", "0:0"] if privileged() else []
        # A writable layer the host cannot watch (not overlay storage) is not writable at all:
        # what the agent writes outside /app goes to tmpfs mounts, counted in its memory.
        layer = [] if self.engine.layer_on_host() else \
            ["--read-only", "--tmpfs", "/var/tmp:rw,nosuid,nodev,mode=1777", "--tmpfs",
             "/run:rw,nosuid,nodev,mode=755"]
        return ["run", "-d", "--pull=never", "--name", self.name, "--init", *rootless, *first,
                *layer,
                "--label", f"{OWNER_LABEL}={owner_label()}",
                "--label", f"evoharness.task={self.task_id}",
                "--network", network, "--hostname", "sandbox",
                "--memory", f"{limits.memory_mb}m", "--memory-swap", f"{limits.memory_mb}m",
                "--pids-limit", str(limits.nproc), "--cpus", f"{limits.cpus:g}",
                *self.engine.ulimits(), "--ulimit", f"fsize={fsize}", "--ulimit", "core=0",
                "--cap-drop", "ALL", "--security-opt", "no-new-privileges",
                "--tmpfs", f"/tmp:rw,nosuid,nodev,mode=1777,"
                           f"size={min(limits.memory_mb // 2, limits.storage_mb)}m",
                *self.engine.no_volumes(), *self._volumes(mounts), "--workdir", APP,
                "--entrypoint", "sleep",
                self.image.ref, "infinity"]

    def _volumes(self, mounts: list[Mount]) -> list[str]:
        binds = [(self.app_dir, APP, True)]
        if self.harness_dir is not None:
            binds.append((Path(self.harness_dir), HARNESS, False))
        binds += [(Path(p), PREFIX + p, False) for p in host_python().mounts]
        binds += [(f, f"/etc/{f.name}", False) for f in self._tables()]
        binds += [(m.source, m.dest, m.writable) for m in mounts]
        for source, _, _ in binds:
            if ":" in str(source) or "," in str(source):
                raise ValueError(f"cannot bind-mount a path holding ':' or ',': {source}")
        # An installed suite's hidden tests, under the Python mounted above: an empty folder
        # over each (a bind, which the engine mounts after its parent; a tmpfs it mounts first).
        binds += [(self._empty_dir(), PREFIX + d, False)
                  for d in hidden_suites(host_python().mounts)]
        return [a for source, dest, writable in binds
                for a in ("-v", f"{source}:{dest}:{'rw' if writable else 'ro'}")]

    def _empty_dir(self) -> Path:
        empty = self._private_dir() / "empty"
        empty.mkdir(mode=0o555, exist_ok=True)
        return empty

    def _private_dir(self) -> Path:
        """A host directory of this sandbox's own (its user tables), deleted at close."""
        if self.private is None:
            self.private = owned_dir("box")
            self.private.chmod(0o755)
        return self.private

    def _tables(self) -> list[Path]:
        for name, text in self.identity.tables.items():
            (self._private_dir() / name).write_text(text)
            (self._private_dir() / name).chmod(0o644)
        return [self._private_dir() / name for name in self.identity.tables]

    def _kill_agent_processes(self) -> None:
        """After every command: what it left runs on in the container (killing the engine's
        client does not reach it); every process of the sandbox's user goes, found and killed
        from the host."""
        if self.mounts is not None:
            self.procs.kill_user(self.identity.uid)

    def _new_oom_kill(self) -> bool:
        """Whether the container's memory cgroup killed a process since the last look."""
        kills = self.procs.oom_kills()
        new, self.oom_kills = kills > self.oom_kills, kills
        return new

    def kill_leftovers(self) -> int:
        """Remove the container, so every process in it is gone; 1 if there was one. A later
        command starts a new container from the image."""
        if self.mounts is None:
            return 0
        self.engine.remove([self.name])
        self.mounts, self.upper = None, None
        return 1

    def _capped(self) -> bool:
        return self.volume is not None

    def close(self) -> None:
        self.kill_leftovers()
        if self.owns_app and self.volume is not None:
            self.volume.close()
        elif self.owns_app:
            remove_tree(self.app_dir)  # the agent's tree may be nested past what rmtree walks
        if self.private is not None:
            remove_tree(self.private)
