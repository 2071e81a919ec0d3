"""The settings of a change's trial (run.yaml `verdicts:`): error rates, caps, batch sizes and the
effects the bounds are built around. What the trial does with them is trial.py's and screen.py's;
benchmarks/verdicts.py measures what these defaults achieve."""
from __future__ import annotations

from pydantic import BaseModel, ConfigDict, Field, model_validator


class TrialDesign(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    alpha: float = Field(0.05, gt=0, lt=0.5, description=(
        "false-accept rate: the chance a change that does not raise its predicted tasks is kept; "
        "in a run with validation tasks, also the chance one that does not raise the validation "
        "tasks showing its failure is kept (each test at this level: an intersection-union "
        "test, so no correction is due)"))
    max_rollouts: int = Field(100, ge=2, description=(
        "cap on the paired probe of one change (base and change arm together)"))
    batch_rollouts: int = Field(4, ge=2, description=(
        "probe rollouts per look (both arms); every predicted task gets at least one pair"))
    futility_effect: float = Field(0.2, gt=0, lt=1, description=(
        "the average gain in pass probability over the predicted tasks that the futility bound "
        "tests against: stop as not shown once the data contradict it"))
    futility_ratio: float = Field(3.0, gt=1, description=(
        "likelihood ratio against `futility_effect` at which a trial stops as not shown"))
    validation_futility_ratio: float = Field(10.0, gt=1, description=(
        "`futility_ratio` of both paired tests in a run with validation tasks: a change must "
        "show two gains, one after the other, so each must stop less readily"))
    validation_max_rollouts: int = Field(150, ge=2, description=(
        "`max_rollouts` of each paired test in a run with validation tasks (for the same reason)"))
    futility_min_pairs: int = Field(6, ge=1, description="paired rollouts before futility may stop")
    validation_tasks: int = Field(4, ge=1, description=(
        "most validation tasks a change's trial runs: those where the base showed the failure "
        "the change targets, the most such failed rollouts first"))
    regression_alpha: float = Field(0.05, gt=0, lt=0.5, description=(
        "the chance a change that breaks a screened task is kept anyway"))
    regression_margin: float = Field(0.7, gt=0, lt=1, description=(
        "a drop in pass probability this large on a screened task counts as a regression"))
    screen_stable_level: float = Field(0.9, gt=0, lt=1, description=(
        "a task is a screen candidate (stable passing) when a base pass probability of at "
        "least this is plausible ..."))
    screen_candidate_prob: float = Field(0.15, gt=0, lt=1, description=(
        "... that is, has at least this posterior chance"))
    screen_drop_mean: float = Field(0.75, gt=0, lt=1, description=(
        "a candidate whose topped-up posterior mean is below this is not stable passing and "
        "leaves the screen"))
    screen_min_history: int = Field(8, ge=0, description=(
        "base rollouts a task needs before its history-based floor is used; the screen tops up "
        "thinner histories with fresh base rollouts"))
    screen_quantile: float = Field(0.95, ge=0.5, lt=1, description=(
        "the history-based floor is this posterior quantile of the base's pass probability "
        "minus `regression_margin` (a high quantile: the floor errs towards reverting)"))
    screen_first_rollouts: int = Field(8, ge=1, description=(
        "horizon of the first screen test (floor 1 - margin, needs no base rollouts)"))
    screen_first_share: float = Field(0.5, gt=0, lt=1, description=(
        "the share of `regression_alpha` spent on the first test (the rest on the second)"))
    screen_max_rollouts: int = Field(30, ge=1, description="cap on the change's screen rollouts per task")
    screen_batch: int = Field(2, ge=1, description="screen rollouts per task per look (either arm)")

    def with_validation(self) -> TrialDesign:
        """The design of both paired tests in a run with validation tasks."""
        return self.model_copy(update={"futility_ratio": self.validation_futility_ratio,
                                       "max_rollouts": self.validation_max_rollouts})

    @model_validator(mode="after")
    def _consistent(self) -> TrialDesign:
        if self.screen_drop_mean > self.screen_stable_level:
            raise ValueError("screen_drop_mean must not exceed screen_stable_level")
        best = (self.screen_min_history + 1) / (self.screen_min_history + 2)
        if best < self.screen_drop_mean:  # else every topped-up task would leave the screen
            raise ValueError("screen_min_history is too small for screen_drop_mean: even a "
                             "top-up that all passes would drop the task from the screen")
        if self.screen_first_rollouts > self.screen_max_rollouts:
            raise ValueError("screen_first_rollouts must not exceed screen_max_rollouts")
        return self
