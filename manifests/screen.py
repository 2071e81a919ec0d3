"""The regression screen of one change: which train tasks it must not break (chosen by the system
from the base tree's rollouts), and each task's sequential non-inferiority test on the change's
own rollouts. When the screen runs and what it decides for the change is trial.py's.

Why this shape. A change answers for what its own rollouts show: no sibling's predictions can
excuse a regression (no shields), and predicting a regression does not excuse it either.
- Non-inferiority, not "no difference": a harmless change need not prove it changes nothing, only
  that each screened task keeps a pass probability above a floor. A regression is a drop of at
  least `regression_margin`; a change with one faces the null "p <= floor" on that task (when the
  floor is >= base - margin) and is kept with probability at most `regression_alpha`. Every task
  must clear its own test (an intersection-union test), so no multiplicity correction is due.
- Two tests per task, splitting `regression_alpha` between them (`screen_first_share` to the
  first; Bonferroni), so a task may clear either:
  1. against 1 - margin, valid whatever the base's pass probability (it is at most 1). A stable
     task clears it in a few rollouts of the change, with no base rollouts at all.
  2. only for a task that cannot clear the first within `screen_first_rollouts`: the screen tops
     up the base's rollouts of the task to `screen_min_history` (history by tree plus fresh base
     rollouts), then tests all the change's rollouts against q - margin, q a high posterior
     quantile of the base's pass probability. A flaky task that only looked stable gets a floor
     it can clear. A task the top-up shows is clearly not stable passing (posterior mean below
     `screen_drop_mean` even if the rest of the top-up passed) leaves the screen; that bar is set
     well below `screen_stable_level`, because the top-up was triggered by the change's own
     failures and a broken stable task must not escape through it.
- The system, not the agent, picks the screened tasks: the candidates are those whose history
  leaves a pass probability of at least `screen_stable_level` plausible (posterior chance at
  least `screen_candidate_prob`), so a stable task with one unlucky failure, or with only a
  rollout or two of history, is still guarded. History is fair here: no one chose these tasks to
  look bad, and choosing tasks that look good only overstates their base rate, which raises the
  floor (errs towards reverting).
- Each test is sequential.py's calibrated mixture e-value at p0 = floor, looked at every
  `screen_batch` rollouts; a task that can no longer reach the boundary within its horizon
  (curtailment) fails that test.
"""
from __future__ import annotations

import math
from collections.abc import Collection, Sequence
from dataclasses import dataclass
from typing import Literal

from .design import TrialDesign
from .history import TreeHistory, beta_quantile
from .sequential import binom_cdf, calibrated_threshold, mixture_evalue, reachable

ScreenResult = Literal["dropped", "held", "regressed", "open"]
ScreenArm = Literal["base", "change"]


@dataclass(frozen=True)
class ScreenTask:
    """A candidate for the screen, with the base tree's history before the trial."""

    task_id: str
    passes: int
    fails: int


@dataclass(frozen=True)
class ScreenState:
    """A candidate after the rollouts of its looks so far: the base top-up, then the test."""

    task_id: str
    mean: float
    result: ScreenResult
    base_passes: int = 0
    base_rollouts: int = 0
    floor: float | None = None
    threshold: float | None = None
    passes: int = 0
    rollouts: int = 0
    evalue: float = 1.0
    waiting_on: ScreenArm | None = None  # the arm the next look needs (open only)
    target: int = 0  # rollouts of that arm the next look needs in all


def plan_screen(history: TreeHistory, exclude: Collection[str], design: TrialDesign) -> list[ScreenTask]:
    """Candidates: every task evaluated under the base tree that is plausibly stable passing (its
    posterior gives a pass probability of at least `screen_stable_level` a chance of at least
    `screen_candidate_prob`), except the change's predicted fixes (the probe tests those)."""
    tasks = []
    for task_id in sorted(history.counts):
        passes, fails = history.passes_fails(task_id)
        # P(p >= level) under Beta(passes + 1, fails + 1) = P(Bin(passes + fails + 1, level) <= passes)
        chance = binom_cdf(passes, passes + fails + 1, design.screen_stable_level)
        if task_id not in exclude and chance >= design.screen_candidate_prob:
            tasks.append(ScreenTask(task_id, passes, fails))
    return tasks


def _floor(passes: int, fails: int, design: TrialDesign) -> float:
    """q - margin, rounded up to a hundredth: a higher floor only makes the test stricter, and
    rounding keeps the number of calibrations small."""
    raw = beta_quantile(passes + 1, fails + 1, design.screen_quantile) - design.regression_margin
    return math.ceil(round(raw * 100, 9)) / 100


@dataclass(frozen=True)
class _Test:
    result: ScreenResult
    floor: float
    threshold: float
    passes: int
    rollouts: int
    evalue: float
    target: int = 0


def _test(change: Sequence[bool], floor: float, horizon: int, alpha: float, first_look: int,
          design: TrialDesign) -> _Test:
    """One sequential test of "p <= floor" at level `alpha` on the change's rollouts, looked at
    after `first_look` rollouts and every `screen_batch` after that, up to `horizon`."""
    threshold = calibrated_threshold(floor, horizon, alpha)
    n = passes = 0
    evalue = 1.0
    look = min(horizon, max(1, first_look))
    while True:
        if len(change) < look:
            return _Test("open", floor, threshold, passes, n, evalue, target=look)
        passes += sum(change[n:look])
        n = look
        evalue = mixture_evalue(passes, n, floor)
        if evalue >= threshold:
            return _Test("held", floor, threshold, passes, n, evalue)
        if not reachable(passes, n, horizon, floor, threshold):
            return _Test("regressed", floor, threshold, passes, n, evalue)
        look = min(horizon, n + design.screen_batch)


def screen_state(task: ScreenTask, base: Sequence[bool], change: Sequence[bool],
                 design: TrialDesign) -> ScreenState:
    """Replay the task's looks in attempt order (first test; if it fails, the base top-up and the
    second test) and stop at the first that decides, so the result depends on the recorded
    rollouts only."""
    share = design.screen_first_share * design.regression_alpha
    first = _test(change, round(1.0 - design.regression_margin, 9), design.screen_first_rollouts,
                  share, design.screen_batch, design)
    common = dict(task_id=task.task_id, mean=round((task.passes + 1) / (task.passes + task.fails + 2), 4))
    if first.result != "regressed":
        return _state(common, first)
    passes = n = 0
    while True:
        total = task.passes + task.fails + n
        common = dict(task_id=task.task_id, mean=round((task.passes + passes + 1) / (total + 2), 4),
                      base_passes=passes, base_rollouts=n)
        short = max(0, design.screen_min_history - total)
        if (task.passes + passes + short + 1) / (total + short + 2) < design.screen_drop_mean:
            return ScreenState(**common, result="dropped")  # even all passes fall short
        if not short:
            break
        step = min(design.screen_batch, short)
        if len(base) < n + step:
            return ScreenState(**common, result="open", waiting_on="base", target=n + step)
        passes += sum(base[n:n + step])
        n += step
    floor = _floor(task.passes + passes, task.fails + n - passes, design)
    if floor <= 0:  # the base cannot drop by the margin: nothing to guard
        return ScreenState(**common, floor=floor, result="held", passes=first.passes,
                           rollouts=first.rollouts, evalue=first.evalue)
    second = _test(change, floor, design.screen_max_rollouts, design.regression_alpha - share,
                   first.rollouts, design)
    return _state(common, second)


def _state(common: dict, test: _Test) -> ScreenState:
    return ScreenState(**common, result=test.result, floor=test.floor, threshold=test.threshold,
                       passes=test.passes, rollouts=test.rollouts, evalue=test.evalue,
                       waiting_on="change" if test.result == "open" else None, target=test.target)
