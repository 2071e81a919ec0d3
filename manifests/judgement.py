"""The stored judgement of one change: the two trees its trial compared and the base's history,
fixed before its first rollout (`TrialSetup`), with the trial's verdict. Status, `manifest show`,
the report, the scoreboard and REVERT read it and never recompute it. Reaching the verdict is
trial.py's; choosing the trees and running the rollouts is the loop's; storing is the run
ledger's (evolve/ledger).

Why the setup is stored apart from the verdict: a trial runs for several rounds and a killed run
resumes it. The trees, the history and the design must be the ones the first round used (a later
evaluation would change the history, a hand edit of run.yaml the design), so they are written
once, before any rollout, and a resumed trial reads them back."""
from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .design import TrialDesign
from .history import TreeHistory
from .verdict import Decision, TrialOutcome, TrialVerdict

PAIRED_TRIAL = "paired-trial"  # the verdict method, as the store's index names it
Applied = Literal["alone", "on_parent"]


class TrialSetup(BaseModel):
    """A change's trial before its first rollout. `applied`: "alone" = the change cherry-picked
    onto the harness its session started from (the base); "on_parent" = it does not apply there
    alone (it edits lines an earlier change of its session edited, or needs its files), so it is
    judged as committed, against its parent: the two arms still differ by this change only.
    `history` is the compared base tree's own; `candidates` is the session base's, which the
    screen picks the stable tasks from (the same history when applied alone)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change_id: str
    run_id: str
    iteration: int = Field(ge=0, description="the iteration whose EVOLVE made it and TRIAL judged it")
    applied: Applied
    base_commit: str
    base_tree: str
    change_commit: str  # its branch trial/<change_id>
    change_tree: str
    history: TreeHistory
    candidates: TreeHistory
    design: TrialDesign
    placebo: bool = Field(False, description="its tree shows the agent nothing new; never used "
                                             "by the verdict (the report counts kept placebos)")
    validation: list[str] | None = Field(None, description=(
        "the validation tasks its trial runs: those where the base's evaluation showed the "
        "failure it targets (`targets`); None when the run has no validation tasks (judged on "
        "its predicted tasks only, as trials stored before this field were)"))
    targets: list[str] | None = Field(None, description=(
        "the failure classes it targets (the cue of the library entry it applies); None for a "
        "change of its own: any failure of a validation task counts"))


class Judgement(BaseModel):
    """A change's trial and its verdict."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    setup: TrialSetup
    verdict: TrialVerdict

    @property
    def change_id(self) -> str:
        return self.setup.change_id

    @property
    def run_id(self) -> str:
        return self.setup.run_id

    @property
    def iteration(self) -> int:
        return self.setup.iteration

    @property
    def placebo(self) -> bool:
        return self.setup.placebo

    @property
    def decision(self) -> Decision:
        return self.verdict.decision

    @property
    def outcome(self) -> TrialOutcome:
        return self.verdict.outcome

    @property
    def reason(self) -> str:
        return self.verdict.reason

    def summary(self) -> str:
        """How the trial ran, in one line: which trees, the p-value, the rollouts spent."""
        how = ("alone on the base" if self.setup.applied == "alone"
               else "against its parent (it does not apply to the base alone)")
        v = self.verdict
        return (f"{how} {self.setup.base_commit[:10]}; p = {v.p_value:.4f}; "
                f"{v.rollouts.used} rollouts ({v.rollouts.recorded} recorded)")

    def tests(self) -> list[str]:
        """Its predicted-task test and its validation test, a line each."""
        v = self.verdict
        predicted = v.predicted.line() if v.predicted else f"p = {v.p_value:.4g}"
        validation = (v.validation.line() if v.validation is not None
                      else "none: the run has no validation tasks")
        return [f"predicted tasks: {predicted}", f"validation tasks: {validation}"]

    @property
    def confirmed_fixes(self) -> list[str]:
        """Predicted fixes whose own pairs reached the trial's boundary."""
        return [t.task_id for t in self.verdict.tasks if t.role == "probe" and t.result == "fixed"]

    @property
    def regressions(self) -> list[str]:
        """Screened tasks that fell to their floor."""
        return [t.task_id for t in self.verdict.tasks if t.result == "regressed"]
