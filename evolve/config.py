"""A run's configuration (run.yaml) and its paths: the one explicit object that carries where
everything lives, so no stage reads global state."""
from __future__ import annotations

import re
from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from agent.clients import parse_spec
from evoharness.errors import EvoError, ValidationFailed
from evoharness.files import write_atomic
from manifests.design import TrialDesign

CONFIG_FILE = "run.yaml"


class StopRules(BaseModel):
    """Enforced in code by the loop, checked after every iteration."""

    model_config = ConfigDict(extra="forbid")

    iterations: int = Field(3, ge=0, description="evolution iterations after the baseline")
    wall_seconds: float | None = Field(None, gt=0)
    tokens: int | None = Field(None, gt=0, description="code-agent and evolve-agent tokens")
    target_pass_rate: float | None = Field(None, gt=0, le=1)
    patience: int | None = Field(None, ge=1, description="iterations without improvement")


class RunConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    run_id: str
    tasks: Path  # a suite directory (with suite.toml)
    task_ids: list[str] | None = None  # a subset of the suite; None = all
    model: str = "embedded"  # the code agent's model (agent.clients.make_model spec)
    evolve_model: str | None = None  # defaults to `model`
    k: int = Field(2, ge=1, description="rollouts per task per evaluation")
    workers: int = Field(2, ge=1)
    rollout_timeout: float = Field(300.0, gt=0)
    calibration: bool = Field(True, description="evaluate the baseline twice to measure noise")
    extra_rollouts: int = Field(2, ge=0, description="targeted re-runs of borderline tasks")
    max_changes: int = Field(3, ge=1, description="changes the evolve agent may make per iteration")
    evolve_max_steps: int = Field(24, ge=1)
    analyst: bool = False
    unsafe_no_sandbox: bool = False
    stop: StopRules = Field(default_factory=StopRules)
    verdicts: TrialDesign = Field(default_factory=TrialDesign, description=(
        "the per-change trial: false-accept rate, rollout caps (manifests/design.py)"))

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


class RunPaths(BaseModel):
    """Where a run keeps things; every command derives them from the run directory alone."""

    model_config = ConfigDict(frozen=True)

    root: Path

    @property
    def config(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def workspace(self) -> Path:
        return self.root / "workspace"

    @property
    def db(self) -> Path:
        return self.root / "traces.duckdb"

    @property
    def manifests(self) -> Path:
        return self.root / "manifests"

    def iteration_dir(self, iteration: int) -> Path:
        return self.root / "iterations" / f"it{iteration:03d}"

    def rollouts(self, iteration: int) -> Path:
        """Rollout trace files, written by the runner and ingested into the store."""
        return self.iteration_dir(iteration) / "rollouts"

    def evidence(self, iteration: int) -> Path:
        """The layered evidence the evolve agent reads (overview.md at the top)."""
        return self.iteration_dir(iteration) / "evidence"


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


def validate_config(raw: object, file: Path) -> RunConfig:
    """A RunConfig from `raw` (run.yaml's content, or init's options); each problem names `file`,
    the field and the value."""
    try:
        return RunConfig.model_validate(raw)
    except ValidationError as error:
        raise ValidationFailed(
            str(file),
            [
                EvoError(e["msg"], file=file, field=".".join(map(str, e["loc"])),
                         value=e.get("input"))
                for e in error.errors()
            ],
        ) from error
