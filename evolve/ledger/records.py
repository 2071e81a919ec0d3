"""The run's own records besides manifests, judgements and reverts (those are manifests/'): the
phases of an iteration, defined once, each finished phase's typed result, the run itself, and
its final exams (made by evolve/exam.py)."""
from __future__ import annotations

from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evolve.compare import Comparison
from manifests.history import TaskCounts
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
    specific: bool = True  # a change, or a no-change reason the agent stated specifically


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


class ExamArm(BaseModel):
    """One harness the exam ran: its role (seed, seed again, final, best), and where it is."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    label: str  # as shown: "best (iteration 2)"
    commit: str
    tree: str
    iteration: int | None = None  # the evaluation that chose it (best), else None


class ExamRecord(BaseModel):
    """A finished final exam: seed (twice), final and best harness on the held-out tasks, paired
    by task; the comparisons with the seed share `confidence` (Bonferroni), the noise floor is
    the seed against itself at the same level. Its rollouts are in RUN/exams/<exam_id>/, a store
    the loop never reads: held-out results enter no decision."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    run_id: str
    exam_id: str
    iteration: int  # the last evaluated iteration when it ran
    finished_at: float
    model: str
    k: int
    tasks: list[str]
    arms: list[ExamArm]
    confidence: float  # family-wise over `comparisons`
    noise_floor: Comparison
    comparisons: list[Comparison] = Field(default_factory=list)  # each harness against the seed
    note: str | None = None  # e.g. the final harness is the seed (no change was kept)

    @property
    def headline(self) -> Comparison | None:
        """The comparison the run is judged by: the final harness against the seed if it was
        made, else the best one's."""
        return next((c for c in self.comparisons if c.b == "final"), None) or \
            next(iter(self.comparisons), None)

    def verdict_line(self) -> str:
        head = self.headline
        said = f"{self._label(head.b)} vs seed: {head.sentence()}" if head else self.note or ""
        return (f"exam on {len(self.tasks)} held-out tasks, k={self.k}: {said} "
                f"(noise floor, seed vs seed: {self.noise_floor.sentence()})")

    def lines(self) -> list[str]:
        """Every comparison in words, the noise floor first."""
        shown = [f"noise floor (seed vs seed again): {self.noise_floor.sentence()}"]
        shown += [f"{self._label(c.b)} vs seed: {c.sentence()}" for c in self.comparisons]
        if self.note:
            shown.append(self.note)
        return shown

    def per_task(self) -> dict[str, dict[str, TaskCounts]]:
        """Each held-out task's counts under each harness (by arm name); a harness with no scored
        rollout of a task has no entry."""
        rows: dict[str, dict[str, TaskCounts]] = {task: {} for task in self.tasks}
        floor = self.noise_floor
        for pair in floor.tasks:
            rows[pair.task_id].update({floor.a: pair.a, floor.b: pair.b})
        for comparison in self.comparisons:
            for pair in comparison.tasks:
                rows[pair.task_id][comparison.b] = pair.b
        return rows

    def _label(self, name: str) -> str:
        return next((a.label for a in self.arms if a.name == name), name)
