"""The run's own records besides manifests, judgements and reverts (those are manifests/'): the
phases of an iteration, defined once, each finished phase's typed result, the run itself, and
its final exams (made by evolve/evaluate/exam.py)."""
from __future__ import annotations

import math
from enum import StrEnum
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from evoharness.evolve.evaluate.compare import Comparison
from evoharness.manifests.history import TaskCounts
from evoharness.manifests.verdict import Decision
from evoharness.traces.ingest import IngestReport


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
ROLLING = (Phase.EVAL, Phase.TRIAL)  # the phases that run rollouts


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


class StopRecord(BaseModel):
    """Why the loop last stopped and where: the run's phase records then. A later process that
    goes on (a higher limit) adds phases, which makes this record out of date."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    iteration: int
    phase_records: int
    reason: str
    stopped_at: float

    def line(self) -> str:
        return f"stopped after iteration {self.iteration}: {self.reason}"


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


class EvolutionCost(BaseModel):
    """What the evolution spent before its exam (evolve/evaluate/cost.py), printed beside its gain; the
    matched-budget baseline's default N is taken from it."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    rollouts: int  # every rollout of the run: evaluations (train and held-out) and trials
    train_rollouts: int  # those on train tasks, infra errors included
    train_tasks: int
    tokens: int  # the code agent's (every rollout) and the evolve agent's
    hours: float  # working time: its rollouts' (their intervals' union) and the other phases'

    @property
    def rollouts_per_train_task(self) -> int:
        """Train rollouts over train tasks, rounded half up, at least 1."""
        return max(1, math.floor(self.train_rollouts / max(1, self.train_tasks) + 0.5))

    def sentence(self) -> str:
        took = f"{self.hours:.1f} hours" if self.hours >= 1 else f"{60 * self.hours:.0f} minutes"
        return f"{self.rollouts:,} rollouts, {self.tokens:,} tokens, {took}"


def slashed(temperatures: list[float]) -> str:
    """[0.2, 0.8] as "0.2/0.8": the best-of baseline's temperatures as its label and record
    show them."""
    return "/".join(f"{t:g}" for t in temperatures)


class BestOfRecord(BaseModel):
    """The exam's matched-budget baseline as it ran (evolve/evaluate/best_of.py): the seed, `picks` picks
    per held-out task, each the picker's choice among `n` fresh attempts."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str  # its arm: best-of-N
    label: str  # as shown: seed best-of-N
    n: int
    n_from: Literal["evolution", "given"]  # the evolution's rollouts per train task, or set
    picks: int  # per held-out task
    temperatures: list[float] = Field(default_factory=list)  # its attempts' in turn; [] the seed's
    rollouts: int  # its attempts, infra errors included
    tokens: int  # its attempts' and the picker's
    picker_calls: int
    fallbacks: int  # replies that named no attempt: the first shown (a shuffled order) counted

    def sentence(self) -> str:
        why = ("= the evolution's rollouts per train task" if self.n_from == "evolution"
               else "as given")
        at = f", sampled at temperatures {slashed(self.temperatures)} in turn" \
            if self.temperatures else ""
        return (f"{self.picks} picks per task, each the model's choice among {self.n} fresh "
                f"attempts (N {why}{at}): {self.rollouts:,} rollouts, {self.tokens:,} tokens, "
                f"{self.picker_calls} picker calls ({self.fallbacks} replies named no attempt)")


class ExamRecord(BaseModel):
    """A finished final exam: seed (twice), final and best harness, and the matched-budget
    baseline when asked for, on the held-out tasks, paired by task; all comparisons share
    `confidence` (Bonferroni), the noise floor is the seed against itself at the same level. Its
    rollouts are in RUN/exams/<exam_id>/, a store the loop never reads: held-out results enter
    no decision."""

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
    # Final and best against the seed and the baseline, and the baseline against the seed.
    comparisons: list[Comparison] = Field(default_factory=list)
    note: str | None = None  # e.g. the final harness is the seed (no change was kept)
    baseline: BestOfRecord | None = None
    cost: EvolutionCost | None = None  # None in exams recorded before it was measured
    # The seed's rollouts taken from iteration 0's evaluation of it (exam.reuse_first_evaluation)
    reused_rollouts: int = 0

    @property
    def headline(self) -> Comparison | None:
        """The comparison the run is judged by: the final harness against the seed if it was
        made, else the best one's."""
        return next((c for b in ("final", "best") for c in self.comparisons
                     if c.a == "seed" and c.b == b), None)

    @property
    def against_baseline(self) -> Comparison | None:
        """The headline's harness against the matched-budget baseline."""
        head, base = self.headline, self.baseline
        return next((c for c in self.comparisons if head and base and c.a == base.name
                     and c.b == head.b), None)

    @property
    def baseline_vs_seed(self) -> Comparison | None:
        """The matched-budget baseline against the seed."""
        return next((c for c in self.comparisons if self.baseline and c.a == "seed"
                     and c.b == self.baseline.name), None)

    def verdict_line(self) -> str:
        cost = f"; the evolution spent {self.cost.sentence()}" if self.cost else ""
        return (f"exam on {len(self.tasks)} held-out tasks, k={self.k}: "
                f"{'; '.join(self._verdicts())} "
                f"(noise floor, seed vs seed: {self.noise_floor.sentence()}){cost}")

    def answer(self) -> list[str]:
        """What a morning reader asks first: the evolved harness against the seed and against
        the matched-budget baseline (with no evolved harness, that it is the seed and what the
        baseline did against it), and what the evolution cost."""
        return self._verdicts() + ([f"the evolution spent {self.cost.sentence()}"]
                                   if self.cost else [])

    def answered(self) -> list[Comparison]:
        """The comparisons the answer states: the headline and it against the baseline, or, with
        no evolved harness, the baseline against the seed."""
        shown = ((self.headline, self.against_baseline) if self.headline is not None
                 else (self.baseline_vs_seed,))
        return [c for c in shown if c is not None]

    def _verdicts(self) -> list[str]:
        said = [self.said(c) for c in self.answered()]
        return said if self.headline is not None else [self.note or "", *said]

    def lines(self) -> list[str]:
        """Every comparison in words, the noise floor first, then what the baseline and the
        evolution cost."""
        shown = [f"noise floor (seed vs seed again): {self.noise_floor.sentence()}"]
        shown += [self.said(c) for c in self.comparisons]
        if self.note:
            shown.append(self.note)
        if self.baseline:
            shown.append(f"{self._label(self.baseline.name)}: {self.baseline.sentence()}")
        if self.cost:
            shown.append(f"the evolution spent {self.cost.sentence()}")
        return shown

    def per_task(self) -> dict[str, dict[str, TaskCounts]]:
        """Each held-out task's counts under each harness (by arm name; the seed's first run
        alone, as the noise floor shows it); a harness with no scored rollout of a task has no
        entry."""
        rows: dict[str, dict[str, TaskCounts]] = {task: {} for task in self.tasks}
        for comparison in [self.noise_floor, *self.comparisons]:
            for pair in comparison.tasks:
                rows[pair.task_id].setdefault(comparison.a, pair.a)
                rows[pair.task_id].setdefault(comparison.b, pair.b)
        return rows

    def said(self, comparison: Comparison) -> str:
        return (f"{self._label(comparison.b)} vs {self._label(comparison.a)}: "
                f"{comparison.sentence()}")

    def _label(self, name: str) -> str:
        return next((a.label for a in self.arms if a.name == name), name)
