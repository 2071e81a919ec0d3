"""The run's own records besides manifests, judgements and reverts (those are manifests/'): the
phases of an iteration, defined once, each finished phase's typed result, and the run itself."""
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from manifests.attribution import Decision
from traces.ingest import IngestReport


class Phase(StrEnum):
    """An iteration's phases, in order."""

    EVAL = "EVAL"
    INGEST = "INGEST"
    ATTRIBUTE = "ATTRIBUTE"
    REVERT = "REVERT"
    DISTILL = "DISTILL"
    EVOLVE = "EVOLVE"
    COMMIT = "COMMIT"


PHASE_ORDER = tuple(Phase)
EVALUATE = PHASE_ORDER[:5]  # evaluate (and judge) the current harness; a clean stop is after these
EVOLVE = PHASE_ORDER[5:]  # change the harness and pre-register the predictions


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvalResult(_Result):
    phase: Literal[Phase.EVAL] = Phase.EVAL
    rollouts_run: int
    attempts: int  # per task; later extra rollouts are numbered from here


class IngestResult(IngestReport):
    model_config = ConfigDict(extra="forbid", frozen=True)

    phase: Literal[Phase.INGEST] = Phase.INGEST


class AttributeResult(_Result):
    phase: Literal[Phase.ATTRIBUTE] = Phase.ATTRIBUTE
    changes: int
    before_iteration: int | None = None
    borderline: list[str] = Field(default_factory=list)  # tasks given extra rollouts
    placebos: list[str] = Field(default_factory=list)
    decisions: dict[str, Decision] = Field(default_factory=dict)


class RevertResult(_Result):
    phase: Literal[Phase.REVERT] = Phase.REVERT
    reverted: list[str] = Field(default_factory=list)


class DistillResult(_Result):
    phase: Literal[Phase.DISTILL] = Phase.DISTILL
    overview: str
    overview_chars: int
    tasks: int
    rollouts: int
    analyst_failed: list[str] = Field(default_factory=list)


class EvolveResult(_Result):
    phase: Literal[Phase.EVOLVE] = Phase.EVOLVE
    changes: int
    no_change_reason: str | None = None
    resumed: bool = False  # the manifest was registered before a crash; the session was not rerun
    tokens: int = 0
    steps: int = 0
    exit_reason: str = ""


class CommitResult(_Result):
    phase: Literal[Phase.COMMIT] = Phase.COMMIT
    changes: int


PhaseResult = Annotated[
    EvalResult | IngestResult | AttributeResult | RevertResult | DistillResult | EvolveResult
    | CommitResult,
    Field(discriminator="phase"),
]


class PhaseRecord(BaseModel):
    """A finished phase: the loop resumes after the last one."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    iteration: int
    phase: Phase
    harness_commit: str  # the workspace's HEAD when the phase finished
    finished_at: float
    seconds: float
    result: PhaseResult


class RunRecord(BaseModel):
    """The run as `init` created it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    created_at: float
    config: dict[str, Any]
