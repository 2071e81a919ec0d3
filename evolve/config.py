"""A run's configuration (run.yaml): models, k, workers, stop rules. Where everything lives is the
run ledger's RunPaths."""
from __future__ import annotations

import re
from pathlib import Path
from typing import Annotated

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from evoharness.agent.clients import parse_spec
from evoharness.errors import EvoError, from_validation
from evoharness.files import write_atomic
from evoharness.manifests.design import TrialDesign
from evoharness.tasks.sandbox.engine import EngineChoice
from evoharness.tasks.sandbox.environments import EnvironmentKind, EnvironmentSettings
from evoharness.tasks.executor import ExecutorKind
from evoharness.tasks.task import TaskSplit

from .ledger.paths import RunPaths

Temperature = Annotated[float, Field(ge=0.0, le=2.0)]
BASELINE = re.compile(r"none|best-of(?::([1-9][0-9]{0,3}))?")


class StopRules(BaseModel):
    """Enforced in code by the loop, checked after every iteration."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(3, ge=0, description="evolution iterations after the baseline")
    wall_seconds: float | None = Field(None, gt=0)
    tokens: int | None = Field(None, gt=0, description="code-agent and evolve-agent tokens")
    target_pass_rate: float | None = Field(None, gt=0, le=1)
    patience: int | None = Field(None, ge=1, description="iterations without improvement")


class ExamConfig(BaseModel):
    """The final exam (evolve/evaluate/exam.py): seed, final and best harness on the held-out tasks."""

    model_config = ConfigDict(extra="forbid")

    k: int = Field(4, ge=1, description="rollouts per held-out task per harness")
    confidence: float = Field(0.95, ge=0.5, lt=1, description="family-wise over the "
                              "comparisons with the seed (Bonferroni)")
    on_stop: bool = Field(True, description="`evoharness evolve` runs it when a stop rule holds")
    baseline: str | None = Field(None, description=(
        "best-of or best-of:N: the seed, each pick the model's choice among N fresh attempts "
        "(N: the evolution's rollouts per train task), evolve/evaluate/best_of.py; none: no baseline"))
    picks: int | None = Field(None, ge=1, description="baseline picks per held-out task "
                              "(default: k); each costs N rollouts")
    temperatures: list[Temperature] = Field(default_factory=list, description=(
        "the baseline's attempts sample at these in turn, so each pick chooses among attempts "
        "at each (a stronger baseline than the seed's one temperature); empty: the seed's own"))

    @field_validator("baseline")
    @classmethod
    def _known_baseline(cls, value: str | None) -> str | None:
        if value is not None and not BASELINE.fullmatch(value):
            raise ValueError("use best-of, best-of:N (N a whole number from 1) or none")
        return None if value == "none" else value

    @property
    def best_of_n(self) -> int | None:
        """N of a `best-of:N` baseline; None for `best-of` (the evolution's) or no baseline."""
        found = BASELINE.fullmatch(self.baseline or "")
        return int(found.group(1)) if found and found.group(1) else None


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    tasks: Path  # a suite directory (with suite.toml, or a folder of tasks and `split`)
    task_ids: list[str] | None = None  # a subset of the suite; None = all
    split: TaskSplit | None = None  # the run's own train / held-out split; None = suite.toml's
    model: str = "embedded"  # the code agent's model (agent.clients.make_model spec)
    evolve_model: str | None = None  # defaults to `model`
    k: int = Field(2, ge=1, description="rollouts per task per evaluation")
    workers: int = Field(2, ge=1)
    rollout_timeout: float = Field(300.0, gt=0)
    calibration: bool = Field(True, description=(
        "evaluate the baseline twice: a longer history for the first trials to screen with"))
    max_changes: int = Field(3, ge=1, description="changes the evolve agent may make per iteration")
    evolve_max_steps: int = Field(24, ge=1)
    analyst: bool = Field(False, description="an LLM pass (the evolve model) adds a root "
                          "cause to each failing task's evidence")
    unsafe_no_sandbox: bool = False
    environment: EnvironmentKind = Field("auto", description=(
        "where tasks run: host (bubblewrap), container (each in its image), or auto "
        "(docs/containers.md)"))
    engine: EngineChoice = Field("auto", description="the container engine: podman or docker")
    executor: ExecutorKind = Field("local", description="where rollouts run")
    # With executor ray: HOST:PORT, auto or ray://HOST:PORT; unset means what ray.init() does:
    # RAY_ADDRESS, else the cluster last started on this machine, else a new local instance.
    ray_address: str | None = None
    stop: StopRules = Field(default_factory=StopRules)
    verdicts: TrialDesign = Field(default_factory=TrialDesign, description=(
        "the per-change trial: false-accept rate, rollout caps (manifests/design.py)"))
    exam: ExamConfig = Field(default_factory=ExamConfig)
    library: Path | None = None  # an improvement library the evolve agent reads (evolve/library)
    starter_library: bool = Field(True, description=(
        "also offer the starter entries shipped with evoharness (evolve/library/starters)"))

    @field_validator("run_id")
    @classmethod
    def _safe_run_id(cls, value: str) -> str:
        if not re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]{0,63}", value):
            raise ValueError("use letters, digits, '.', '_' or '-' (at most 64)")
        return value

    @field_validator("model", "evolve_model")
    @classmethod
    def _known_model_spec(cls, value: str | None) -> str | None:
        if value is not None:
            try:
                parse_spec(value)
            except EvoError as error:  # pydantic reports ValueErrors with the field and value
                raise ValueError(f"{error.message}; {error.hint}") from error
        return value

    @property
    def evolve_model_spec(self) -> str:
        return self.evolve_model or self.model

    def environment_settings(self, paths: RunPaths) -> EnvironmentSettings:
        """Where this run's tasks run; build logs kept in the run."""
        return EnvironmentSettings(kind=self.environment, engine=self.engine,
                                   build_logs=paths.builds)


def save_config(paths: RunPaths, config: RunConfig) -> None:
    data = config.model_dump(mode="json", exclude_none=True)
    write_atomic(paths.config, yaml.safe_dump(data, sort_keys=False))


def load_config(run_dir: str | Path) -> tuple[RunPaths, RunConfig]:
    """Read RUN/run.yaml; every problem names the file, the field and the value."""
    paths = RunPaths(root=Path(run_dir))
    if not paths.config.is_file():
        raise EvoError(
            "not a run directory (no run.yaml)",
            file=paths.config,
            hint=f"create one with `evoharness init {run_dir} --tasks tasks/suite`",
        )
    try:
        raw = yaml.safe_load(paths.config.read_text())
    except yaml.YAMLError as error:
        raise EvoError(f"invalid YAML: {error}", file=paths.config) from error
    return paths, validate_config(raw, paths.config)


def read_config_file(path: Path) -> dict:
    """A run.yaml to start a run from (`init --config`), as data: its relative `tasks` and
    `library` paths are taken from the file's folder, and the run's id comes from the new run's
    directory, not from the file. Every problem names the file."""
    if not path.is_file():
        raise EvoError("the config file does not exist", file=path, field="--config",
                       hint="give a run.yaml, e.g. one from an earlier run's directory")
    try:
        raw = yaml.safe_load(path.read_text())
    except (OSError, UnicodeDecodeError) as error:
        raise EvoError(f"cannot read the config file: {error}", file=path) from None
    except yaml.YAMLError as error:
        mark = getattr(error, "problem_mark", None)
        where = f" at line {mark.line + 1}, column {mark.column + 1}" if mark else ""
        problem = getattr(error, "problem", None) or " ".join(str(error).split())
        raise EvoError(f"invalid YAML{where}: {problem}", file=path) from None
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        raise EvoError("must be a mapping of run.yaml's fields (model: ..., k: ...)", file=path,
                       field="(file)", value=type(raw).__name__)
    raw = {key: value for key, value in raw.items() if key != "run_id"}
    for key in ("tasks", "library"):
        if isinstance(raw.get(key), str):
            raw[key] = str((path.parent / Path(raw[key]).expanduser()).resolve())
    return raw


def merged(base: dict, over: dict) -> dict:
    """`base` with `over`'s values in, section by section (stop:, exam:, verdicts:)."""
    out = dict(base)
    for key, value in over.items():
        inner = out.get(key)
        out[key] = merged(inner, value) if isinstance(inner, dict) and isinstance(value, dict) \
            else value
    return out


def validate_config(raw: object, file: Path) -> RunConfig:
    """A RunConfig from `raw` (run.yaml's content, or init's options); each problem names `file`,
    the field and the value."""
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as error:
        raise from_validation(error, str(file), file=file) from error
