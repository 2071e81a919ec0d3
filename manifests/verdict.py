"""The stored judgement of one change: the decision with everything it rested on (design, boundary,
e-value, p-value, per-task counts, floors, rollouts spent), so status, `manifest show`, the report
and the scores read it instead of recomputing. Building it is trial.py's; scoring it is scores.py's."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .design import TrialDesign

Decision = Literal["keep", "revert"]
TrialOutcome = Literal["effective", "not_shown", "regression", "untestable"]
TaskRole = Literal["probe", "screen", "claim"]
TaskResult = Literal["fixed", "not_fixed", "held", "regressed", "dropped", "unjudged"]


class TaskEvidence(BaseModel):
    """One task as the trial saw it. role: `probe` = a predicted fix, run on both arms; `screen` =
    guarded against regression, change arm only; `claim` = a predicted regression on a task that
    was not screened (scored as unjudged). result: fixed / not_fixed (probe: whether the task's own
    pairs reach the trial's boundary), held / regressed (screen), dropped (the base's top-up
    showed the task is not stable passing), unjudged (not reached)."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    role: TaskRole
    predicted: Literal["fix", "regression"] | None = None
    probability: float | None = None
    history: str  # passes/total under the base tree before the trial
    history_mean: float  # posterior mean pass probability of the base
    base: str | None = None  # base-arm passes/rollouts (probe pairs; screen top-up)
    change: str | None = None  # probe and screen: change-arm passes/rollouts
    wins: int | None = None
    losses: int | None = None
    floor: float | None = None  # screen: the null "pass probability <= floor"
    threshold: float | None = None
    evalue: float | None = None
    result: TaskResult


class Rollouts(BaseModel):
    """Rollouts the decision used (base and change arm of the probe; the screen's base top-up and
    change rollouts) and how many were recorded for the trial in all (more when a batch ran past
    the deciding look)."""

    model_config = ConfigDict(frozen=True)

    base: int = 0
    change: int = 0
    screen_base: int = 0
    screen_change: int = 0
    recorded: int = 0

    @property
    def used(self) -> int:
        return self.base + self.change + self.screen_base + self.screen_change


class TrialVerdict(BaseModel):
    """The decision on one change and its evidence."""

    model_config = ConfigDict(frozen=True)

    change_id: str
    base_tree: str
    decision: Decision
    outcome: TrialOutcome
    reason: str
    evalue: float = Field(description="the probe's sign-test e-value at the deciding look")
    threshold: float | None = Field(None, description="the probe's calibrated boundary")
    p_value: float = Field(description=(
        "the chance, for a change with no gain, that the probe's e-value would reach the largest "
        "value seen within the cap (exact; <= alpha exactly when the change passed the probe)"))
    futility: float = Field(0.0, description="log likelihood ratio against the futility effect")
    looks: int = 0
    wins: int = 0
    losses: int = 0
    rollouts: Rollouts = Field(default_factory=Rollouts)
    tasks: list[TaskEvidence] = Field(default_factory=list)
    design: TrialDesign

    @property
    def kept(self) -> bool:
        return self.decision == "keep"
