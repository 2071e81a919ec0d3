"""The paired probe of one change: its predicted fixes run on the base tree and on "base + this
change alone", paired by task and attempt, judged by one sequential sign test over all predicted
tasks together. When the probe runs and how its result combines with the screen is trial.py's.

Why this test.
- Fresh base rollouts, never history, as the comparison. The evolve agent picks its predicted tasks
  after reading every rollout, so it can pick tasks that failed by chance; their history
  understates them and any later rollout looks like a fix (regression to the mean). A base arm run
  now, beside the change arm, is not selected on: it has the same distribution as the change arm
  whenever the change does nothing.
- Pairs and the sign test (McNemar). The i-th base rollout of a task is paired with its i-th change
  rollout. A pair where exactly one passes is discordant; under "the change does not raise any
  predicted task" a discordant pair is a change win with probability <= 1/2, whatever the tasks'
  pass rates and however they mix. So the wins among discordant pairs are one Bernoulli sequence
  under the null, and sequential.py's mixture e-value with its exactly calibrated boundary gives
  a false-accept rate <= alpha for the change as a whole, at any look. Predicting more tasks buys
  no extra chances: it only pools more pairs into the same single test.
- Looks after every batch of `pairs_per_look` pairs per task, up to the cap. Stop early for a win
  (e-value reaches the boundary), for futility (the pooled rollouts of the predicted tasks
  contradict an average gain of `futility_effect` per rollout by a likelihood ratio of
  `futility_ratio`: stopping to revert can never raise the false-accept rate, so this bound is
  tuned for cost and power only), or when the boundary is out of reach within the cap.
"""
from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from .design import TrialDesign
from .sequential import calibrated_threshold, effect_log_ratio, mixture_evalue, reachable

ProbeResult = Literal["effective", "futile", "capped", "open"]


class ProbeOutcomes(BaseModel):
    """Every judged rollout of one change's trial so far: per arm and task, passes in attempt
    order. The caller counts a rollout that stayed an infra error as a failure of its arm."""

    model_config = ConfigDict(frozen=True)

    base: dict[str, list[bool]] = Field(default_factory=dict)
    change: dict[str, list[bool]] = Field(default_factory=dict)


class ProbePlan(BaseModel):
    """Fixed before the first rollout: the tasks, the look schedule and the boundary."""

    model_config = ConfigDict(frozen=True)

    tasks: list[str]
    pairs_per_look: int
    max_looks: int
    horizon: int  # most pairs in all, so most discordant pairs
    threshold: float

    @property
    def pairs_at_cap(self) -> int:
        """Pairs of each task once every look has run."""
        return self.max_looks * self.pairs_per_look


@dataclass(frozen=True)
class TaskPairs:
    task_id: str
    pairs: int
    base_passes: int
    change_passes: int
    wins: int
    losses: int


@dataclass(frozen=True)
class ProbeState:
    """The probe at its last complete look (internal: the verdict records what it needs)."""

    looks: int
    wins: int
    losses: int
    evalue: float
    max_evalue: float
    futility: float  # log likelihood ratio against the futility effect
    result: ProbeResult
    tasks: tuple[TaskPairs, ...]

    @property
    def rollouts(self) -> int:
        return 2 * sum(t.pairs for t in self.tasks)


def plan_probe(tasks: Sequence[str], design: TrialDesign) -> ProbePlan | None:
    """The look schedule for these predicted tasks, or None when the cap allows not even one pair
    per task (a change predicting that many tasks cannot be tested)."""
    width = 2 * len(tasks)
    if not tasks or design.max_rollouts < width:
        return None
    per_look = max(1, design.batch_rollouts // width)
    max_looks = design.max_rollouts // (width * per_look)
    horizon = max_looks * per_look * len(tasks)
    return ProbePlan(tasks=sorted(tasks), pairs_per_look=per_look, max_looks=max_looks,
                     horizon=horizon, threshold=calibrated_threshold(0.5, horizon, design.alpha))


class ProbeReplay:
    """Replays the probe's looks in order on the recorded rollouts and stops at the first that
    decides, so the state is a function of the rollouts alone (rollouts past that look are
    ignored). It remembers the looks it has replayed and, when the next call's rollouts extend
    the same prefix, carries on from there instead of starting again."""

    def __init__(self, plan: ProbePlan, design: TrialDesign) -> None:
        self.plan = plan
        self.design = design
        self._prefix: list[tuple[list[bool], list[bool]]] = [([], []) for _ in plan.tasks]
        self._state = ProbeState(looks=0, wins=0, losses=0, evalue=1.0, max_evalue=1.0,
                                 futility=0.0, result="open",
                                 tasks=tuple(TaskPairs(t, 0, 0, 0, 0, 0) for t in plan.tasks))

    def state(self, outcomes: ProbeOutcomes) -> ProbeState:
        arms = [(outcomes.base.get(t, []), outcomes.change.get(t, [])) for t in self.plan.tasks]
        m = self._state.looks * self.plan.pairs_per_look
        if any(base[:m] != seen_b or change[:m] != seen_c
               for (base, change), (seen_b, seen_c) in zip(arms, self._prefix)):
            self.__init__(self.plan, self.design)  # different rollouts: replay from the start
        state = self._state
        while state.result == "open" and state.looks < self.plan.max_looks:
            m = (state.looks + 1) * self.plan.pairs_per_look
            if any(len(base) < m or len(change) < m for base, change in arms):
                break
            state = self._look(state, arms, m)
        self._state = state
        m = state.looks * self.plan.pairs_per_look
        self._prefix = [(list(base[:m]), list(change[:m])) for base, change in arms]
        return state

    def _look(self, state: ProbeState, arms: list[tuple[list[bool], list[bool]]], m: int) -> ProbeState:
        plan, design, start = self.plan, self.design, m - self.plan.pairs_per_look
        tasks = []
        for pairs, (base, change) in zip(state.tasks, arms):
            b, c = base[start:m], change[start:m]
            tasks.append(TaskPairs(
                pairs.task_id, m, pairs.base_passes + sum(b), pairs.change_passes + sum(c),
                pairs.wins + sum(1 for x, y in zip(b, c) if y and not x),
                pairs.losses + sum(1 for x, y in zip(b, c) if x and not y)))
        wins, losses = sum(t.wins for t in tasks), sum(t.losses for t in tasks)
        evalue = mixture_evalue(wins, wins + losses, 0.5)
        futility = effect_log_ratio(sum(t.base_passes for t in tasks),
                                    sum(t.change_passes for t in tasks), m * len(tasks),
                                    design.futility_effect)
        look = state.looks + 1
        remaining = (plan.max_looks - look) * plan.pairs_per_look * len(tasks)
        result: ProbeResult = "open"
        if evalue >= plan.threshold:
            result = "effective"
        elif m * len(tasks) >= design.futility_min_pairs and futility >= math.log(design.futility_ratio):
            result = "futile"
        elif not reachable(wins, wins + losses, wins + losses + remaining, 0.5, plan.threshold):
            result = "capped"
        return ProbeState(looks=look, wins=wins, losses=losses, evalue=evalue,
                          max_evalue=max(state.max_evalue, evalue), futility=futility,
                          result=result, tasks=tuple(tasks))


def probe_target(plan: ProbePlan, state: ProbeState) -> int:
    """Pairs per task the next look needs in all (0 once the probe is decided)."""
    return 0 if state.result != "open" else (state.looks + 1) * plan.pairs_per_look
