"""Harbor's on-disk task format (task.toml, instruction.md, environment/, tests/, solution/) as
pydantic models, and the suite (suite.toml's train/held-out split). Running a task is sandbox.py's."""
from __future__ import annotations

import os
import re
import shutil
import tempfile
import tomllib
from pathlib import Path, PurePosixPath
from typing import Any, Literal, TypeVar

import psutil
from pydantic import (BaseModel, ConfigDict, Field, ValidationError, ValidationInfo,
                      field_validator, model_validator)

from evoharness.errors import EvoError, ValidationFailed, from_validation, validation_problems
from evoharness.files import read_text_inside
from evoharness.tasks.results import Split


class _Section(BaseModel):
    # Harbor adds keys over versions; unknown ones are tolerated, known ones are validated.
    model_config = ConfigDict(extra="allow", frozen=True)


class TaskMetadata(_Section):
    difficulty: str = "medium"
    category: str = ""
    tags: list[str] = Field(default_factory=list)


# Finite numbers only (no inf or nan): a timeout of 1e308 would hang a worker forever, and an
# infinite pass_reward would fail every rollout. A day bounds any phase.
MAX_TIMEOUT_SEC = 86_400.0


class VerifierConfig(_Section):
    timeout_sec: float = Field(120.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)
    env: dict[str, str] = Field(default_factory=dict)  # given as environment, never shell text
    # Harbor's: "separate" runs the tests in a fresh sandbox that gets only the declared artifacts.
    environment_mode: Literal["shared", "separate"] = "shared"
    # Not Harbor's: the reward a rollout needs to count as a pass (Harbor's tasks give 1 or 0).
    pass_reward: float = Field(1.0, gt=0, le=1000, allow_inf_nan=False)

    @model_validator(mode="before")
    @classmethod
    def _environment_implies_separate(cls, data: Any) -> Any:
        # Harbor's rule: a [verifier.environment] table without a mode means "separate" (the
        # table's own settings are not used here: the fresh sandbox is the task's environment).
        if isinstance(data, dict) and "environment" in data:
            if data.get("environment_mode", "separate") != "separate":
                raise ValueError("[verifier.environment] needs environment_mode = \"separate\"")
            data = {**data, "environment_mode": "separate"}
        return data

    @field_validator("env")
    @classmethod
    def _names_are_variables(cls, env: dict[str, str]) -> dict[str, str]:
        bad = [k for k in env if not re.fullmatch(r"[A-Za-z_][A-Za-z0-9_]*", k)]
        if bad:
            raise ValueError(f"not an environment variable name: {bad[0]!r}")
        if any("\0" in v for v in env.values()):
            raise ValueError("a value holds a NUL byte")
        return env


class AgentConfig(_Section):
    timeout_sec: float = Field(600.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)
    # Harbor's: the user the agent's commands run as. The sandbox never runs them as root.
    user: str | int | None = None

    @field_validator("user")
    @classmethod
    def _not_root(cls, user: str | int | None) -> str | int | None:
        if user is not None and str(user).split(":")[0] in ("0", "root"):
            raise ValueError("the sandbox never runs the agent as root; name a non-root user")
        if isinstance(user, str) and not re.fullmatch(r"[a-z_][a-z0-9_-]{0,31}", user):
            raise ValueError("not a user name (lower-case letters, digits, _ and -)")
        return user


def _host_capacity() -> dict[str, float]:
    """What this machine can give one sandbox: all its memory, CPUs and temp-disk space."""
    return {"memory_mb": psutil.virtual_memory().total >> 20,
            "cpus": len(os.sched_getaffinity(0)),
            "storage_mb": shutil.disk_usage(tempfile.gettempdir()).total >> 20}


class EnvironmentConfig(_Section):
    allow_internet: bool = False
    cpus: float = Field(1, gt=0, allow_inf_nan=False)
    memory_mb: int = Field(2048, ge=16)
    storage_mb: int = Field(10240, ge=1)
    build_timeout_sec: float = Field(600.0, gt=0, le=MAX_TIMEOUT_SEC, allow_inf_nan=False)

    @field_validator("cpus", "memory_mb", "storage_mb")
    @classmethod
    def _fits_this_machine(cls, value: float, info: ValidationInfo) -> float:
        most = _host_capacity()[info.field_name]
        if value > most:
            raise ValueError(f"more than this machine has ({most:g})")
        return value


def _artifact_source(entry: str | dict) -> str:
    return entry if isinstance(entry, str) else str(entry.get("source", ""))


class TaskConfig(_Section):
    """task.toml. Sections other than these (e.g. [task], [solution]) are kept as extras."""

    version: str = "1.0"
    metadata: TaskMetadata = Field(default_factory=TaskMetadata)
    verifier: VerifierConfig = Field(default_factory=VerifierConfig)
    agent: AgentConfig = Field(default_factory=AgentConfig)
    environment: EnvironmentConfig = Field(default_factory=EnvironmentConfig)
    # Harbor's: paths copied from the agent's sandbox into a separate verifier's fresh one.
    artifacts: list[str | dict[str, Any]] = Field(default_factory=list)

    @field_validator("artifacts")
    @classmethod
    def _artifacts_under_app(cls, entries: list[str | dict[str, Any]]) -> list[str | dict[str, Any]]:
        for entry in entries:
            path = PurePosixPath(_artifact_source(entry))
            if not (path == PurePosixPath("/app") or PurePosixPath("/app") in path.parents) \
                    or ".." in path.parts:
                raise ValueError(f"artifact {str(path)!r} is not under /app, the only place the "
                                 "local sandbox lets the agent write")
        return entries

    @property
    def artifact_paths(self) -> list[str]:
        """Each artifact as a path relative to /app ("." for all of /app)."""
        return [str(PurePosixPath(_artifact_source(e)).relative_to("/app")) for e in self.artifacts]


class Task(BaseModel):
    """One loaded task. `root` is the task directory; the agent only ever sees a copy of
    environment/ (minus the Dockerfile) at `workdir`."""

    model_config = ConfigDict(frozen=True)

    id: str
    root: Path
    config: TaskConfig
    instruction: str
    workdir: str = "/app"
    # Where its suite.toml says the suite's tasks run under the `auto` environment ("" for not
    # said): "host" for tasks made for this machine, "container" for tasks that need their image.
    suite_environment: Literal["", "host", "container"] = ""

    @property
    def environment_dir(self) -> Path:
        return self.root / "environment"

    @property
    def tests_dir(self) -> Path:
        return self.root / "tests"

    @property
    def solution_dir(self) -> Path:
        return self.root / "solution"


class Suite(BaseModel):
    """A directory of tasks with a fixed train / validation / held-out split (suite.toml)."""

    model_config = ConfigDict(frozen=True)

    root: Path
    tasks: dict[str, Task]
    train: list[str]
    heldout: list[str]
    validation: list[str] = []  # judge changes in their trials; never shown to the evolve agent
    demo: list[str] = []  # [demo] tasks: train tasks for a short showcase run (README)
    demo_heldout: list[str] = []  # [demo] heldout: held-out tasks its final exam uses
    demo_validation: list[str] = []  # [demo] validation: validation tasks its trials run

    @property
    def demo_tasks(self) -> list[str]:
        """The showcase run's tasks (`init --subset demo`)."""
        return [*self.demo, *self.demo_validation, *self.demo_heldout]

    def items(self, split: Split | None = None) -> list[tuple[Task, Split]]:
        """(task, split) pairs in suite order, optionally one split only."""
        pairs: list[tuple[Task, Split]] = [(self.tasks[t], "train") for t in self.train]
        pairs += [(self.tasks[t], "validation") for t in self.validation]
        pairs += [(self.tasks[t], "heldout") for t in self.heldout]
        return [p for p in pairs if split is None or p[1] == split]


_WORKDIR = re.compile(r"^\s*WORKDIR\s+(\S+)", re.IGNORECASE | re.MULTILINE)


def dockerfile_workdir(text: str) -> str:
    """The last WORKDIR of a Dockerfile (where Harbor runs the agent), /app when none is set."""
    found = _WORKDIR.findall(text)
    return found[-1] if found else "/app"


# What a task's author (or a downloaded suite) gives: each file the host reads is read without
# following links and bounded, and each parser's failure is an EvoError naming the file.
MAX_TASK_FILE_BYTES = 1 << 20  # task.toml, suite.toml, instruction.md, the Dockerfile
MAX_TOML_DEPTH = 32  # nested tables and arrays: Harbor's task.toml needs three


def read_task_file(path: Path) -> str:
    """A task or suite file's text, read without following a link (evoharness.files)."""
    return read_text_inside(path.parent, path.name, limit=MAX_TASK_FILE_BYTES, name=path)


def read_toml(path: Path) -> dict[str, Any]:
    """task.toml or suite.toml as data; EvoError naming the file for anything TOML refuses, and
    for nesting past MAX_TOML_DEPTH (tomllib recurses per level: 20,000 levels overflow it)."""
    text = read_task_file(path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as error:
        raise EvoError(f"not valid TOML: {error}", file=path) from None
    except RecursionError:
        raise EvoError(f"TOML is nested deeper than {MAX_TOML_DEPTH} levels", file=path) from None
    except ValueError as error:  # e.g. an integer of more digits than Python converts
        raise EvoError(f"invalid TOML value: {error}", file=path) from None
    if _depth(data) > MAX_TOML_DEPTH:
        raise EvoError(f"TOML is nested deeper than {MAX_TOML_DEPTH} levels", file=path)
    return data


def _depth(value: Any) -> int:
    """How deep tables and arrays nest, counted without recursion."""
    deepest, stack = 0, [(value, 1)]
    while stack:
        item, level = stack.pop()
        children = item.values() if isinstance(item, dict) else item \
            if isinstance(item, list) else None
        if children is None:
            continue
        deepest = max(deepest, level)
        stack += [(child, level + 1) for child in children]
    return deepest


def _read_config(path: Path) -> TaskConfig:
    try:
        raw = read_toml(path)
    except EvoError as error:
        raise ValidationFailed(str(path.parent), [error]) from None
    try:
        return TaskConfig.model_validate(raw)
    except ValidationError as error:
        raise ValidationFailed(str(path.parent), validation_problems(error, file=path)) from None


def _missing_files(root: Path) -> list[EvoError]:
    required = ["task.toml", "instruction.md", "environment", "tests/test.sh"]
    return [
        EvoError("required file is missing", file=root / name,
                 hint="Harbor tasks need task.toml, instruction.md, environment/, tests/test.sh")
        for name in required
        if not (root / name).exists()
    ]


def load_task(path: str | Path, *, suite_environment: str | None = None) -> Task:
    """Read and check one task directory; raises ValidationFailed naming each bad file/field.
    `suite_environment` is its suite.toml's, when the caller has read it already."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise EvoError("task directory does not exist", file=root)
    missing = _missing_files(root)
    if missing:
        raise ValidationFailed(f"task {root}", missing)
    config = _read_config(root / "task.toml")
    try:
        instruction = read_task_file(root / "instruction.md")
        dockerfile = root / "environment" / "Dockerfile"
        workdir = dockerfile_workdir(read_task_file(dockerfile)) \
            if os.path.lexists(dockerfile) else "/app"
    except EvoError as error:
        raise ValidationFailed(f"task {root}", [error]) from None
    if not instruction.strip():
        raise ValidationFailed(f"task {root}", [EvoError("is empty", file=root / "instruction.md")])
    if workdir != "/app":
        raise ValidationFailed(f"task {root}", [EvoError(
            "the local sandbox runs tasks in /app", file=dockerfile, field="WORKDIR", value=workdir)])
    return Task(id=root.name, root=root, config=config, instruction=instruction, workdir=workdir,
                suite_environment=_suite_environment(root.parent / "suite.toml")
                if suite_environment is None else suite_environment)


def _suite_environment(path: Path) -> str:
    """suite.toml's `environment` (host or container), "" when the file or the key is absent."""
    if not path.is_file():
        return ""
    try:
        value = tomllib.loads(path.read_text()).get("environment", "")
    except tomllib.TOMLDecodeError as error:
        raise EvoError(f"not valid TOML: {error}", file=path) from None
    if value not in ("", "host", "container"):
        raise EvoError("must be \"host\" or \"container\"", file=path, field="environment",
                       value=value)
    return value


class TaskSplit(BaseModel):
    """Which tasks train the harness, which validate its changes and which are held out:
    suite.toml's [split], or one a run keeps in run.yaml (a folder without suite.toml, or `init
    --heldout`). Train tasks are what the evolve agent and its evidence see; validation tasks
    judge whether a change carries over (its trial runs them, the agent never sees them);
    held-out tasks are the exam's only."""

    model_config = ConfigDict(extra="forbid")
    train: list[str]
    validation: list[str] = []
    heldout: list[str]


class _DemoSection(BaseModel):
    model_config = ConfigDict(extra="forbid")
    tasks: list[str] = []
    validation: list[str] = []
    heldout: list[str] = []


_Section_T = TypeVar("_Section_T", TaskSplit, _DemoSection)


def _read_split(path: Path) -> tuple[TaskSplit, _DemoSection]:
    if not path.exists():
        raise EvoError("suite file is missing", file=path,
                       hint="write [split] with train = [...] and heldout = [...], or let "
                            "`evoharness init --tasks DIR` split the folder (--heldout)")
    data = read_toml(path)
    return _section(data, "split", TaskSplit, path), _section(data, "demo", _DemoSection, path)


def _section(data: dict, name: str, model: type[_Section_T], path: Path) -> _Section_T:
    if name == "split" and name not in data:
        raise EvoError("has no [split] section", file=path, field="split",
                       hint="write [split] with train = [...] and heldout = [...], or leave "
                            "suite.toml out and let `evoharness init --tasks DIR` split the "
                            "folder (--heldout)")
    try:
        return model.model_validate(data.get(name, {}))
    except ValidationError as error:
        raise from_validation(error, f"the [{name}] section of {path}", file=path,
                              field_prefix=name) from None


def task_ids_in(root: Path) -> list[str]:
    """The folder's task directories (those with a task.toml), sorted."""
    return sorted(p.name for p in root.iterdir() if (p / "task.toml").exists())


def has_split_file(path: str | Path) -> bool:
    return (Path(path) / "suite.toml").is_file()


def split_of(task_dir: str | Path) -> Split | None:
    """The split that the suite around one task folder puts it in; None outside a suite."""
    task_dir = Path(task_dir).resolve()
    if not has_split_file(task_dir.parent):
        return None
    split, _ = _read_split(task_dir.parent / "suite.toml")
    sides = (("train", split.train), ("validation", split.validation), ("heldout", split.heldout))
    return next((side for side, ids in sides if task_dir.name in ids), None)


def load_suite(path: str | Path, split: TaskSplit | None = None) -> Suite:
    """Load the task directories under `path` and check the split lists each exactly once.

    The split is suite.toml's, unless `split` is given: then suite.toml is not read, and the suite
    is the tasks `split` names (a run's own split, kept in run.yaml)."""
    root = Path(path).resolve()
    if not root.is_dir():
        raise EvoError("task folder does not exist", file=root)
    from_file = split is None
    where = root / "suite.toml" if from_file else root  # what a problem names
    split, demo = _read_split(where) if split is None else (split, _DemoSection())
    found = task_ids_in(root)
    listed = split.train + split.validation + split.heldout
    problems = [EvoError("task is in no split", file=where, field="split", value=t)
                for t in found if t not in listed and from_file]
    problems += [EvoError("listed task has no directory", file=where, field="split", value=t)
                 for t in listed if t not in found]
    problems += [EvoError("demo task is not a train task", file=where,
                          field="demo.tasks", value=t) for t in demo.tasks if t not in split.train]
    problems += [EvoError("demo held-out task is not a held-out task", file=where,
                          field="demo.heldout", value=t)
                 for t in demo.heldout if t not in split.heldout]
    problems += [EvoError("demo validation task is not a validation task", file=where,
                          field="demo.validation", value=t)
                 for t in demo.validation if t not in split.validation]
    problems += [EvoError("task is listed twice", file=where, field="split", value=t)
                 for t in sorted({t for t in listed if listed.count(t) > 1})]
    tasks: dict[str, Task] = {}
    environment = _suite_environment(root / "suite.toml")  # read once: suite.toml can be large
    for name in [t for t in found if t in listed]:
        try:
            tasks[name] = load_task(root / name, suite_environment=environment)
        except ValidationFailed as error:
            problems += error.problems
    if problems:
        raise ValidationFailed(f"suite {root}", problems)
    return Suite(root=root, tasks=tasks, train=split.train, heldout=split.heldout,
                 validation=split.validation, demo=demo.tasks, demo_heldout=demo.heldout,
                 demo_validation=demo.validation)
