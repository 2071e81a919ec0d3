"""The stored judgement of one change: the decision with everything it rested on (design, boundary,
e-value, p-value, per-task counts, floors, rollouts spent), so status, `manifest show`, the report
and the scores read it instead of recomputing. Building it is trial.py's; scoring it is scores.py's."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .design import TrialDesign
from .history import TaskCounts

Decision = Literal["keep", "revert"]
TrialOutcome = Literal["effective", "not_shown", "not_carried", "regression", "untestable"]
TaskRole = Literal["probe", "validation", "screen", "claim"]
TestResult = Literal["shown", "not_shown", "untestable", "not_run"]
TaskResult = Literal["fixed", "unclear", "not_fixed", "held", "regressed", "dropped", "unjudged"]


class TaskEvidence(BaseModel):
    """One task as the trial saw it. role: `probe` = a predicted fix, run on both arms;
    `validation` = a validation task where the base showed the failure the change targets, run on
    both arms (never a prediction: the evolve agent does not see it); `screen` = guarded against
    regression, change arm only; `claim` = a predicted regression on a task that was not screened
    (scored as unjudged). result, probe and validation: fixed (the task's own pairs reach the
    trial's boundary), not_fixed (its pairs show no gain: wins <= losses), unclear (a gain too
    small to confirm on its own pairs; scored as unjudged); screen: held / regressed, dropped (the
    base's top-up showed the task is not stable passing); unjudged (not reached)."""

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

    @property
    def base_counts(self) -> TaskCounts | None:
        return _counts(self.base)

    @property
    def change_counts(self) -> TaskCounts | None:
        return _counts(self.change)

    @property
    def gain(self) -> float | None:
        """A probed task's change-arm pass rate less its base arm's over the same pairs."""
        base, change = self.base_counts, self.change_counts
        if self.role != "probe" or base is None or change is None:
            return None
        return change.passes / change.total - base.passes / base.total


def _counts(text: str | None) -> TaskCounts | None:
    """TaskCounts of a "passes/rollouts" cell; None when nothing ran."""
    if not text or text.endswith("/0"):
        return None
    passes, total = text.split("/")
    return TaskCounts(passes=int(passes), total=int(total))


class Rollouts(BaseModel):
    """Rollouts the decision used (base and change arm of the probe; the screen's base top-up and
    change rollouts) and how many were recorded for the trial in all (more when a batch ran past
    the deciding look)."""

    model_config = ConfigDict(frozen=True)

    base: int = 0
    change: int = 0
    validation_base: int = 0
    validation_change: int = 0
    screen_base: int = 0
    screen_change: int = 0
    recorded: int = 0

    @property
    def used(self) -> int:
        return (self.base + self.change + self.validation_base + self.validation_change
                + self.screen_base + self.screen_change)


class PairedTest(BaseModel):
    """One of a trial's paired sign tests, as it ended: over the predicted tasks, or over the
    validation tasks that showed the failure the change targets. `result`: shown (its e-value
    crossed the boundary: a gain at level `alpha`), not_shown (futility or the cap), untestable
    (no task to run it on), not_run (an earlier test decided first). `p_value`: the exact chance,
    for a change with no gain on these tasks, of an e-value as large within the cap."""

    model_config = ConfigDict(frozen=True)

    tasks: list[str] = Field(default_factory=list)
    result: TestResult
    alpha: float
    pairs: int = 0
    wins: int = 0
    losses: int = 0
    evalue: float = 1.0
    threshold: float | None = None
    p_value: float = 1.0

    def line(self) -> str:
        """The test in a few words, without task ids (the evolve agent reads reasons)."""
        if self.result in ("untestable", "not_run"):
            return self.result.replace("_", " ")
        return (f"{self.result.replace('_', ' ')}: {self.wins} wins / {self.losses} losses in "
                f"{self.pairs} pairs on {len(self.tasks)} task(s), p = {self.p_value:.3g} "
                f"(level {self.alpha:g})")


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
    predicted: PairedTest | None = Field(None, description=(
        "the test on the predicted tasks (None on verdicts stored before it was recorded)"))
    validation: PairedTest | None = Field(None, description=(
        "the test on the validation tasks that showed the failure the change targets; None when "
        "the run has no validation tasks (judged on its predicted tasks only)"))

    @property
    def kept(self) -> bool:
        return self.decision == "keep"

    @property
    def gains(self) -> dict[str, float]:
        """Per predicted task the trial paired: change-arm pass rate less the base arm's."""
        return {t.task_id: t.gain for t in self.tasks if t.gain is not None}

    @property
    def effect(self) -> float | None:
        """The observed gain on the predicted tasks at the deciding look (mean over tasks);
        None when no pair ran. A trial stops once the gain looks large enough, so for a kept
        change this estimate tends to overstate the true gain; the p-value stays valid."""
        gains = self.gains
        return sum(gains.values()) / len(gains) if gains else None
