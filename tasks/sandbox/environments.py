"""Where each task runs: on this host (bubblewrap, sandbox.py) or in its own image (a container,
container.py), as a run's `environment` says: `host`, `container`, or `auto`, which puts a task in
its image when a container engine works here and its Dockerfile builds something the host copy of
environment/ lacks (a RUN step, a second stage, a COPY --from, a remote ADD), unless its suite.toml
says `environment = "host"` (or "container"). Also the batch's preparation: every container task's
image built before any rollout. The sandboxes themselves are sandbox.py's and container.py's."""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError
from rich.console import Console

from evoharness.errors import EvoError, ValidationFailed
from evoharness.tasks.sandbox.bases import containers_home, load_map
from evoharness.tasks.sandbox.container import ContainerSandbox
from evoharness.tasks.sandbox.dockerfile import builds_something
from evoharness.tasks.sandbox.engine import Engine, EngineChoice, find_engine, require_engine
from evoharness.tasks.sandbox.images import BuildFailed, ImageBuilder, Skipped, TaskImage
from evoharness.tasks.sandbox.leftovers import sweep_dirs
from evoharness.tasks.sandbox.protocol import Sandbox, SandboxFactory
from evoharness.tasks.task import Task

EnvironmentKind = Literal["auto", "host", "container"]
Say = Callable[[str], None]


def _to_stderr(line: str) -> None:
    Console(stderr=True, soft_wrap=True).print(line, markup=False, highlight=False)


class EnvironmentSettings(BaseModel):
    """A run's choice (run.yaml `environment`, `engine`), and where images and logs go."""

    model_config = ConfigDict(frozen=True)

    kind: EnvironmentKind = "auto"
    engine: EngineChoice = "auto"
    home: Path | None = None  # the base map and image cache; None: containers_home()
    build_logs: Path | None = None  # each task's build log is copied here (a run's builds/)


def settings_for(kind: str, engine: str, **where) -> EnvironmentSettings:
    """Settings from a command line's words; a bad word is an EvoError naming the option."""
    try:
        return EnvironmentSettings(kind=kind, engine=engine, **where)
    except ValidationError as error:
        problem = error.errors()[0]
        option = {"kind": "--environment", "engine": "--engine"}.get(str(problem["loc"][0]))
        raise EvoError(problem["msg"], field=option, value=problem.get("input")) from None


@dataclass(frozen=True)
class Prepared:
    """A batch's container tasks: built, left out (no base here), or failed to build."""

    images: dict[str, TaskImage] = field(default_factory=dict)  # by task directory
    skipped: list[Skipped] = field(default_factory=list)
    failed: list[BuildFailed] = field(default_factory=list)

    def raise_problems(self) -> None:
        """An EvoError naming every task that cannot run in its image (before any rollout)."""
        problems = [*self.failed, *(EvoError(s.reason, field="task", value=s.task_id)
                                    for s in self.skipped)]
        if problems:
            raise ValidationFailed("task environments", problems)


class Environments:
    """The SandboxFactory of a batch: each task's sandbox on the host or in its image.
    `containers` names the tasks that run in their image when another process decided it (a
    Ray worker takes the driver's decision); otherwise this one decides with its own engine."""

    def __init__(self, settings: EnvironmentSettings, host: SandboxFactory | None, *,
                 containers: frozenset[str] | None = None, say: Say = _to_stderr) -> None:
        self.settings = settings
        self.host = host  # None: no task may run on the host (bubblewrap is not there)
        self.decided = containers
        self.say = say
        # Asked for only once a task may need it: `info` costs about a second.
        self._engine: Engine | None = None
        if settings.kind == "container" or containers:
            self._engine = require_engine(settings.engine)
        self.images: dict[str, TaskImage] = {}
        self.swept = False
        self.swept_dirs = False

    @property
    def engine(self) -> Engine | None:
        if self._engine is None and self.settings.kind != "host":
            self._engine = find_engine(self.settings.engine)
        return self._engine

    def in_container(self, task: Task) -> bool:
        if self.decided is not None:
            return task.id in self.decided
        if self.settings.kind != "auto":
            return self.settings.kind == "container"
        if task.suite_environment:
            return task.suite_environment == "container" and self.engine is not None
        dockerfile = task.environment_dir / "Dockerfile"
        return dockerfile.is_file() and builds_something(dockerfile.read_text()) and \
            self.engine is not None

    def builder(self) -> ImageBuilder:
        engine = self.engine
        if engine is None:
            raise EvoError("no container engine for a task that runs in its image",
                           field="engine", value=self.settings.engine)
        home = self.settings.home or containers_home()
        return ImageBuilder(engine, home, load_map(home), self.settings.build_logs)

    def prepare(self, tasks: Sequence[Task]) -> Prepared:
        """Build (or find in the cache) the image of each task that runs in a container, and
        sweep the containers and directories that dead processes left; nothing is raised for a
        task."""
        if not self.swept_dirs:  # what killed processes left: their /app copies, their files
            sweep_dirs()
            self.swept_dirs = True
        wanted = {str(t.root): t for t in tasks if self.in_container(t)}
        if not wanted:
            return Prepared()
        builder = self.builder()
        self._sweep()
        images, skipped, failed = {}, [], []
        for root, task in wanted.items():
            try:
                found = builder.ensure(task, self.say)
            except BuildFailed as error:
                failed.append(error)
                continue
            if isinstance(found, Skipped):
                skipped.append(found)
            else:
                images[root] = found
        self.images.update(images)
        return Prepared(images=images, skipped=skipped, failed=failed)

    def _sweep(self) -> None:
        if not self.swept and self.engine is not None:
            self.engine.sweep()
            self.swept = True

    def __call__(self, task: Task, *, harness_dir: Path | None = None) -> Sandbox:
        if not self.in_container(task):
            if self.host is None:
                raise EvoError("this task runs on the host, where there is no sandbox",
                               field="environment", value=task.id)
            return self.host(task, harness_dir=harness_dir)
        image = self.images.get(str(task.root)) or self._build_here(task)
        return ContainerSandbox.for_task(task, image, self.engine, harness_dir=harness_dir)

    def _build_here(self, task: Task) -> TaskImage:
        """A task not prepared in this process (a Ray worker's): its image from this machine's
        cache, built if need be; a base it cannot have is this rollout's error."""
        self._sweep()
        found = self.builder().ensure(task, self.say)
        if isinstance(found, Skipped):
            raise EvoError(found.reason, field="task", value=task.id)
        self.images[str(task.root)] = found
        return found


def environments(settings: EnvironmentSettings, unsafe_no_sandbox: bool = False,
                 containers: frozenset[str] | None = None) -> Environments:
    """The factory for `settings`: bubblewrap (refused when missing, unless unsafe) for the
    tasks on the host, looked for now unless every task runs in a container."""
    from evoharness.tasks.sandbox.unsafe import require_sandbox

    host = None if settings.kind == "container" else require_sandbox(unsafe_no_sandbox)
    return Environments(settings, host, containers=containers)
