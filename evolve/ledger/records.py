"""The run's own records besides manifests, judgements and reverts (those are manifests/'): the
phases of an iteration, defined once, each finished phase's typed result, and the run itself."""
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from manifests.verdict import Decision
from traces.ingest import IngestReport


class Phase(StrEnum):
    """An iteration's phases, in order."""

    EVAL = "EVAL"
    INGEST = "INGEST"
    DISTILL = "DISTILL"
    EVOLVE = "EVOLVE"
    COMMIT = "COMMIT"
    TRIAL = "TRIAL"
    REVERT = "REVERT"


PHASE_ORDER = tuple(Phase)
EVALUATE = PHASE_ORDER[:3]  # evaluate the current harness; a clean stop is after these
# Change the harness, pre-register the predictions, judge each change in its own trial and
# revert the rejected ones: the next iteration evaluates the harness that survived.
EVOLVE = PHASE_ORDER[3:]


class _Result(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class EvalResult(_Result):
    phase: Literal[Phase.EVAL] = Phase.EVAL
    rollouts_run: int
    attempts: int  # per task


class IngestResult(IngestReport):
    model_config = ConfigDict(extra="forbid", frozen=True)

    phase: Literal[Phase.INGEST] = Phase.INGEST


class TrialResult(_Result):
    phase: Literal[Phase.TRIAL] = Phase.TRIAL
    changes: int
    rounds: int = 0  # batches of rollouts this process ran (a resumed trial counts its own)
    rollouts: int = 0  # trial rollouts stored for the iteration, infra errors included
    alone: list[str] = Field(default_factory=list)  # judged as base + the change alone
    on_parent: list[str] = Field(default_factory=list)  # judged against their parent commit
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
    EvalResult | IngestResult | DistillResult | EvolveResult | CommitResult | TrialResult
    | RevertResult,
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
