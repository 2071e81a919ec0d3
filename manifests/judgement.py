"""The stored judgement of one change: its verdict with everything the verdict used (the method,
every task's counts and class, the statistics, the rollouts spent), so scores, reports and the
evolve agent read it back instead of recomputing. Reaching a verdict is attribution.py's job;
storing judgements is the run ledger's (evolve/ledger)."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .attribution import Decision, TaskClass, VerdictKind, attribute, classify_tasks
from .noise import NoiseModel, TaskCounts
from .schema import ChangeManifestEntry

THRESHOLD_RULE = "threshold-rule"  # attribution.py's rule: per-task thresholds and a noise band


class TaskEvidence(BaseModel):
    """One task as a judgement saw it: its counts before and after, its class, and the change's
    claim on it (if any)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    before: TaskCounts | None
    after: TaskCounts | None
    cls: TaskClass
    predicted: Literal["fix", "regression"] | None = None
    probability: float | None = None
    borderline: bool = False


class Judgement(BaseModel):
    """A change's verdict and decision, and the evidence behind them. `method` names the verdict
    method; the statistics fields are filled by the methods that compute them."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change_id: str
    run_id: str
    iteration: int = Field(ge=0, description="the evaluation that judged the change")
    before_iteration: int = Field(ge=0, description="the evaluation the change was made on")
    method: str
    verdict: VerdictKind
    decision: Decision
    reason: str
    confirmed_fixes: list[str] = Field(default_factory=list)
    missed_fixes: list[str] = Field(default_factory=list)
    unjudged_predictions: list[str] = Field(default_factory=list)
    predicted_regressions_observed: list[str] = Field(default_factory=list)
    unpredicted_regressions: list[str] = Field(default_factory=list)
    tasks: list[TaskEvidence] = Field(default_factory=list, description="every task judged on")
    noise_band: float | None = None
    p_value: float | None = None
    posterior: float | None = None
    error_rate: float | None = Field(None, description="the method's stated false-accept rate")
    rollouts_spent: int = Field(0, ge=0, description="rollouts run for this verdict alone")
    placebo: bool = Field(False, description="its commit changes nothing the agent sees; "
                                             "never used by the verdict")

    @property
    def regressions(self) -> list[str]:
        return [*self.predicted_regressions_observed, *self.unpredicted_regressions]

    def shown_tasks(self) -> list[TaskEvidence]:
        """The tasks a reader is shown: those the change predicted, and every regression."""
        return [t for t in self.tasks
                if t.predicted is not None or t.cls is TaskClass.REGRESSED]


def judge_by_rule(
    changes: Sequence[ChangeManifestEntry], before: Mapping[str, TaskCounts],
    after: Mapping[str, TaskCounts], noise: NoiseModel, *, run_id: str, iteration: int,
    before_iteration: int, extra_rollouts: Mapping[str, int] | None = None,
) -> list[Judgement]:
    """attribute()'s verdicts as judgements: each with every task's counts and class, the noise
    band, and the borderline re-runs of its own predicted tasks (`extra_rollouts` per task)."""
    classes = classify_tasks(before, after, noise)
    extra = extra_rollouts or {}
    judgements = []
    for change, verdict in zip(changes, attribute(changes, before, after, noise)):
        rows = {row.task_id: row for row in verdict.per_task}
        tasks = [TaskEvidence(
            task_id=task, before=before.get(task), after=after.get(task),
            cls=classes.get(task, TaskClass.UNJUDGED),
            predicted=rows[task].predicted if task in rows else None,
            probability=rows[task].probability if task in rows else None,
            borderline=rows[task].borderline if task in rows else False,
        ) for task in sorted(set(classes) | set(rows))]
        judgements.append(Judgement(
            **verdict.model_dump(exclude={"per_task"}), run_id=run_id, iteration=iteration,
            before_iteration=before_iteration, method=THRESHOLD_RULE, tasks=tasks,
            noise_band=noise.band(),
            rollouts_spent=sum(extra.get(task, 0) for task in change.predicted_tasks()),
        ))
    return judgements
