"""The container engine: the `podman` or `docker` command line (both take the flags used here),
found only when it answers `info`, run with a small environment; the owner label every container
of ours carries and the sweep that removes those whose owning process is gone. What runs in the
containers is container.py's; images are images.py's."""
from __future__ import annotations

import functools
import os
import re
import resource
import shutil
import socket
import subprocess
from collections.abc import Sequence
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.tasks.sandbox import owners

EngineName = Literal["podman", "docker"]
EngineChoice = Literal["auto", "podman", "docker"]
OWNER_LABEL = "evoharness.owner"  # host:owner token of the process that made the container (owners.py)
INFO_TIMEOUT_S = 30.0
# Passed to the engine's command line (its config, its socket, the build proxy); never into a
# container, which gets only the image's environment and what `-e` names.
_ENGINE_ENV = ("PATH", "HOME", "LANG", "TMPDIR", "XDG_RUNTIME_DIR", "XDG_CONFIG_HOME",
               "XDG_DATA_HOME", "REGISTRY_AUTH_FILE", "HTTP_PROXY", "HTTPS_PROXY", "NO_PROXY",
               "http_proxy", "https_proxy", "no_proxy")
_ENGINE_ENV_PREFIXES = ("DOCKER_", "CONTAINER", "BUILDAH_", "PODMAN_", "BUILDKIT_")
# Harbor's nofile. The host's hard limits may be lower, and an engine asked for more than the
# container's init may set fails to start it ("error setting rlimit"): podman's own default
# nproc does here, 32768 is what podman's processes themselves get. The cgroup's pids limit,
# not this, bounds a sandbox's processes.
MAX_NOFILE = 1_048_576
MAX_NPROC = 32_768


class EngineError(EvoError):
    """An engine command failed; the message holds the command and its last lines."""


class Engine(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: EngineName
    binary: str

    def run(self, args: Sequence[str], *, timeout: float = 120.0, stdin: bytes | None = None,
            check: bool = True, cwd: Path | None = None) -> subprocess.CompletedProcess[bytes]:
        """`ENGINE args` (in `cwd`); raises EngineError when it fails (with `check`) or runs
        past `timeout`."""
        argv = [self.binary, *args]
        try:
            done = subprocess.run(argv, input=stdin, capture_output=True, timeout=timeout,
                                  env=engine_env(), check=False, cwd=cwd)
        except subprocess.TimeoutExpired:
            raise EngineError(f"`{' '.join(argv[:3])} ...` ran past {timeout:g}s",
                              field="engine", value=self.name) from None
        if check and done.returncode != 0:
            raise EngineError(f"`{' '.join(argv[:3])} ...` failed: {last_lines(done.stderr)}",
                              field="engine", value=self.name)
        return done

    def text(self, args: Sequence[str], **options) -> str:
        return self.run(args, **options).stdout.decode(errors="replace").strip()

    def image_id(self, ref: str) -> str | None:
        """The local image's id, None when the engine has no image by that name."""
        done = self.run(["image", "inspect", "--format", "{{.Id}}", ref], check=False)
        found = done.stdout.decode().strip()
        return found if done.returncode == 0 and found else None

    def ulimits(self) -> list[str]:
        """Explicit open-file and process rlimits within this host's hard limits."""
        return [a for kind, name, most in ((resource.RLIMIT_NOFILE, "nofile", MAX_NOFILE),
                                           (resource.RLIMIT_NPROC, "nproc", MAX_NPROC))
                for a in ("--ulimit", f"{name}={_hard(kind, most)}:{_hard(kind, most)}")]

    def layer_on_host(self) -> bool:
        """Whether a container's writable layer is a directory this host can watch (overlay
        storage, whose upper directory `inspect` names)."""
        return _storage_driver(self) == "overlay"

    def no_volumes(self) -> list[str]:
        """`run`/`create` flags that put an image's VOLUMEs on a tmpfs (podman), counted in the
        container's memory and gone with it; docker's anonymous volumes go with `rm -v`."""
        return ["--image-volume=tmpfs"] if self.name == "podman" else []

    def remove(self, names: Sequence[str]) -> None:
        """Kill and delete these containers at once, with their anonymous volumes; ones already
        gone are no error."""
        if names:  # podman 4.3 stops at a missing name unless told to ignore it
            self.run(["rm", "-f", "-v", *(["-i", "-t", "0"] if self.name == "podman" else []),
                      *names], check=False, timeout=300)

    def sweep(self) -> list[str]:
        """Remove the containers of ours whose owning process on this host has ended (a driver or
        worker killed with SIGKILL leaves them running); returns their names."""
        names = self.text(["ps", "-a", "--filter", f"label={OWNER_LABEL}", "--format",
                           "{{.Names}}"]).split()
        if not names:
            return []
        owners = self.text(["inspect", "--format",
                            f'{{{{.Name}}}} {{{{index .Config.Labels "{OWNER_LABEL}"}}}}',
                            *names], check=False).splitlines()
        dead = [name.lstrip("/") for name, _, owner in (line.partition(" ") for line in owners)
                if owner and not owner_alive(owner)]
        self.remove(dead)
        return dead


@functools.cache
def _storage_driver(engine: Engine) -> str:
    field = "{{.Store.GraphDriverName}}" if engine.name == "podman" else "{{.Driver}}"
    return engine.text(["info", "--format", field], check=False)


def _hard(kind: int, most: int) -> int:
    hard = resource.getrlimit(kind)[1]
    return most if hard == resource.RLIM_INFINITY else min(hard, most)


def engine_env() -> dict[str, str]:
    return {k: v for k, v in os.environ.items()
            if k in _ENGINE_ENV or k.startswith(_ENGINE_ENV_PREFIXES)}


def last_lines(output: bytes | str, lines: int = 12) -> str:
    text = output.decode(errors="replace") if isinstance(output, bytes) else output
    return "\n".join(text.rstrip().splitlines()[-lines:])


def slug(text: str, most: int = 40) -> str:
    """`text` as a part of an image or container name: lower-case letters, digits and '-'."""
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")[:most].strip("-") or "task"


def owner_label() -> str:
    """This process as the owner of the containers it makes: its host and owner token."""
    return f"{socket.gethostname()}:{owners.this_process()}"


def owner_alive(owner: str) -> bool:
    """Whether the process an owner label names still runs (a label from another host counts as
    alive: only that host can tell)."""
    host, _, token = owner.partition(":")
    return host != socket.gethostname() or owners.alive(token)


@functools.cache
def find_engine(choice: EngineChoice = "auto") -> Engine | None:
    """The engine to use: the one named, or podman then docker, each only if its `info` answers
    (a docker command line without a daemon does not count). None when none works."""
    names: list[EngineName] = ["podman", "docker"] if choice == "auto" else [choice]
    for name in names:
        binary = shutil.which(name)
        if binary is None:
            continue
        engine = Engine(name=name, binary=binary)
        try:
            if engine.run(["info"], timeout=INFO_TIMEOUT_S, check=False).returncode == 0:
                return engine
        except EngineError:
            continue
    return None


def require_engine(choice: EngineChoice = "auto") -> Engine:
    engine = find_engine(choice)
    if engine is None:
        wanted = "podman or docker" if choice == "auto" else choice
        raise EvoError(f"no working container engine ({wanted}: not installed, or `info` fails)",
                       field="engine", value=choice,
                       hint="install podman (./install.sh does), or use --environment host")
    return engine
