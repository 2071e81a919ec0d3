"""Task images: each task's environment/ built once into an image named by a hash of its files,
of its Dockerfile as built (stand-ins in place) and of the ids of the bases it starts from; the
image's /app and user table exported once for the sandboxes to copy (image_export.py); the build
(build_run.py) on a network of its own, never the host's; the build log kept in the cache and
copied into the run. A failed build is a BuildFailed naming the Dockerfile, the step and
the build's last lines; a base that cannot be had here is a Skipped task with the reason."""
from __future__ import annotations

import fcntl
import hashlib
import json
import re
import shutil
import tempfile
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.files import write_atomic, write_model
from evoharness.tasks.sandbox.bases import BaseMap, Resolution, build_pull_flags, resolve_base
from evoharness.tasks.bundles import content_key, pack_dir
from evoharness.tasks.sandbox.dockerfile import external_bases, with_bases
from evoharness.tasks.sandbox import owners
from evoharness.tasks.sandbox.build_run import run_build
from evoharness.tasks.sandbox.engine import Engine, last_lines, slug
from evoharness.tasks.sandbox.image_export import export_image
from evoharness.tasks.sandbox.limits import Limits
from evoharness.tasks.sandbox.unpack import TooLarge
from evoharness.tasks.task import Task

IMAGE_REPO = "localhost/evoharness/task"
KEY_VERSION = "evoharness-image-2"  # change it when what goes into an image changes
LOG_TAIL_LINES = 15
# Builds reach the package registries but not this host's loopback services or abstract UNIX
# sockets: a network namespace of their own behind the engine's bridge, never the host's.
BUILD_NETWORK = {"podman": "private", "docker": "default"}
_STEP = (re.compile(r'building at STEP "(.+?)":'),  # podman / buildah
         re.compile(r'process "(.+?)" did not complete successfully'))  # docker's BuildKit


class BuildFailed(EvoError):
    """A task's image did not build: the Dockerfile, the step, the build's last lines."""

    def __init__(self, task_id: str, message: str, **where) -> None:
        super().__init__(message, **where)
        self.task_id = task_id


class Skipped(BaseModel):
    """A task that cannot run in its image here, and why."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    reason: str


class TaskImage(BaseModel):
    """A built task image and what was exported from it once for every sandbox."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    ref: str
    key: str
    app: Path  # the image's /app (owners and modes kept): each sandbox starts from a copy
    user: str  # the image's USER, "" for none
    env: dict[str, str] = {}  # the image's ENV
    passwd: str  # the image's /etc/passwd and /etc/group
    group: str
    log: Path
    bases: list[Resolution]
    app_bytes: int = 0  # what /app's files claim (sparse ones at full size)
    dropped: list[str] = []  # members of /app not made on the host (a device, a FIFO, a link
    # out), and why


class ImageBuilder:
    """Builds and caches task images under `home`; copies each build log into `log_dir`."""

    def __init__(self, engine: Engine, home: Path, base_map: BaseMap,
                 log_dir: Path | None = None) -> None:
        self.engine = engine
        self.home = Path(home)
        self.base_map = base_map
        self.log_dir = log_dir

    def ensure(self, task: Task, say: Callable[[str], None] = lambda _: None
               ) -> TaskImage | Skipped:
        """The task's image, built unless the cache has it; Skipped when a base cannot be had."""
        dockerfile = task.environment_dir / "Dockerfile"
        if not dockerfile.is_file():
            return Skipped(task_id=task.id, reason=f"{dockerfile} does not exist: a container "
                           "needs the task's Dockerfile")
        text = dockerfile.read_text()
        resolved: list[Resolution] = []
        for name in external_bases(text):
            found = resolve_base(self.engine, name, self.base_map)
            if isinstance(found, str):
                return Skipped(task_id=task.id, reason=found)
            resolved.append(found)
        built_text = with_bases(text, {r.name: r.image for r in resolved if r.image != r.name})
        key = self._key(task, built_text, resolved)
        folder = self.home / "images" / key
        folder.mkdir(parents=True, exist_ok=True)
        with open(folder.parent / f"{key}.lock", "w") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)  # one build per image, across processes too
            image = self._cached(folder)
            if image is None:
                say(f"building the image of task {task.id} ({self.engine.name}; its log: "
                    f"{folder / 'build.log'})")
                image = self._build(task, built_text, resolved, key, folder)
        if image.app_bytes > _cap(task):  # built for another task with the same files
            raise _too_large(task, f"the image's files hold {image.app_bytes} bytes")
        if self.log_dir is not None:
            self.log_dir.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(image.log, self.log_dir / f"{task.id}.log")
        return image

    def _key(self, task: Task, built_text: str, resolved: list[Resolution]) -> str:
        digest = hashlib.sha256(KEY_VERSION.encode())
        for part in [self.engine.name, built_text, *(r.image_id for r in resolved),
                     content_key(pack_dir(task.environment_dir))]:
            digest.update(part.encode() + b"\0")
        return digest.hexdigest()[:32]

    def _cached(self, folder: Path) -> TaskImage | None:
        record = folder / "image.json"
        if not record.is_file():
            return None
        image = TaskImage.model_validate_json(record.read_text())
        return image if self.engine.image_id(image.ref) else None

    def _build(self, task: Task, built_text: str, resolved: list[Resolution], key: str,
               folder: Path) -> TaskImage:
        ref = f"{IMAGE_REPO}-{slug(task.id)}:{key[:20]}"
        log = folder / "build.log"
        header = "".join(f"evoharness: {r.describe()}\n" for r in resolved)
        # Named with this process's owner token: a killed build's is swept (leftovers.py).
        with tempfile.TemporaryDirectory(prefix=f"evo-build-{owners.this_process()}-") as scratch:
            dockerfile = Path(scratch) / "Dockerfile"
            dockerfile.write_text(built_text)
            argv = ["build", *build_pull_flags(self.engine),
                    "--network", BUILD_NETWORK[self.engine.name],
                    *self.engine.ulimits(), "--label", f"evoharness.task={task.id}",
                    "-f", str(dockerfile), "-t", ref, str(task.environment_dir)]
            with open(log, "w") as out:
                out.write(header + f"evoharness: {self.engine.name} {' '.join(argv)}\n")
                out.flush()
                code = run_build(self.engine, argv, out,
                                 task.config.environment.build_timeout_sec)
        if code != 0:
            raise _failure(task, log, code)
        try:
            exported = export_image(self.engine, ref, folder / "app", cap=_cap(task),
                                    most_entries=Limits().max_files)
        except TooLarge as error:
            raise _too_large(task, str(error)) from None
        tables = exported.tables
        config = json.loads(self.engine.text(["image", "inspect", "--format",
                                              "{{json .Config}}", ref]))
        env = dict(item.partition("=")[::2] for item in config.get("Env") or [])
        image = TaskImage(task_id=task.id, ref=ref, key=key, app=folder / "app",
                          user=config.get("User") or "", env=env, passwd=tables["etc/passwd"],
                          group=tables["etc/group"], log=log, bases=resolved,
                          app_bytes=exported.bytes, dropped=exported.dropped[:100])
        write_model(folder / "image.json", image)  # last: its presence means the export is whole
        return image



def _cap(task: Task) -> int:
    return task.config.environment.storage_mb << 20


def _too_large(task: Task, why: str) -> BuildFailed:
    return BuildFailed(task.id, f"task {task.id}'s image does not fit its disk: {why}",
                       file=task.root / "task.toml", field="environment.storage_mb",
                       value=task.config.environment.storage_mb,
                       hint="make the image's /app smaller, or raise storage_mb")


def _failure(task: Task, log: Path, code: int | str) -> BuildFailed:
    text = log.read_text(errors="replace")
    step = next((m.group(1) for pattern in _STEP for m in [*pattern.finditer(text)][-1:]), "")
    why = code if isinstance(code, str) else f"the build exited {code}"
    return BuildFailed(task.id, f"task {task.id}'s image did not build ({why})",
                       file=task.environment_dir / "Dockerfile", field="step",
                       value=step or None,
                       hint=f"its last lines:\n{last_lines(text, LOG_TAIL_LINES)}\n"
                            f"the whole build log: {log}")


def write_skips(path: Path, skipped: list[Skipped]) -> None:
    """The tasks left out and why, one per line, beside the build logs."""
    write_atomic(path, "".join(f"{s.task_id}: {s.reason}\n" for s in skipped))
