"""Paired comparisons of two harnesses on the same tasks: each task's pass-rate difference, their
mean over tasks with a confidence interval, and a verdict in words. Running the rollouts is
evaluation.py's; which harnesses to compare (and how many comparisons share one error rate) is
exam.py's and transfer.py's.

The method, for n tasks that both harnesses have scored rollouts of (infra errors never count):
d_t = rate_B(t) - rate_A(t); the estimate is their mean; the interval is Student's t with n - 1
degrees of freedom around it. Its standard error is the larger of two: the spread of d_t over
tasks (sd / sqrt(n): tasks as the sampled unit, which already holds the rollouts' own noise) and
what k rollouts per task allow (binomial, with Agresti-Caffo's one pass and one fail added per
task and harness), so a handful of tasks that all moved the same way, or outcomes that never
vary (a deterministic model), do not give a zero-width interval. With few tasks the t quantile is
large (n = 3: 4.3 standard errors at 95%), so few tasks rarely show a difference; with one task
there is no interval at all. `benchmarks/exam.py` measures the false "better" rate and the power
by simulation."""
from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from manifests.noise import TaskCounts

METHOD = ("paired by task; mean of per-task pass-rate differences; Student t interval over tasks "
          "(n-1 df), standard error at least the rollouts' binomial noise (Agresti-Caffo)")
Verdict = Literal["better", "worse", "no difference shown", "too few tasks"]


class TaskPair(BaseModel):
    """One task's counts under both harnesses."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    a: TaskCounts
    b: TaskCounts

    @property
    def diff(self) -> float:
        return _rate(self.b) - _rate(self.a)


class Comparison(BaseModel):
    """Harness B against harness A (B - A), paired by task."""

    model_config = ConfigDict(frozen=True)

    a: str  # labels, e.g. "seed" and "final"
    b: str
    tasks: list[TaskPair]
    unpaired: list[str] = Field(default_factory=list, description="tasks only one side scored")
    confidence: float  # of this interval (after any correction for multiple comparisons)
    mean: float | None
    lo: float | None
    hi: float | None
    se: float | None
    verdict: Verdict
    method: str = METHOD

    @property
    def n(self) -> int:
        return len(self.tasks)

    def sentence(self) -> str:
        """The verdict in words: "better by +25.0 points [+5.0, +45.0] (95% interval, 7 tasks)"."""
        if self.verdict == "too few tasks":
            return f"too few tasks to say ({self.n} paired)"
        interval = (f"{_signed(self.mean)} points [{_signed(self.lo)}, {_signed(self.hi)}] "
                    f"({100 * self.confidence:.4g}% interval, {self.n} tasks)")
        if self.verdict == "no difference shown":
            return f"no difference shown: {interval}"
        return f"{self.verdict} by {interval}"


def compare(a: str, a_counts: Mapping[str, TaskCounts], b: str,
            b_counts: Mapping[str, TaskCounts], *, confidence: float) -> Comparison:
    """B against A on the tasks both scored (see the module's docstring for the method)."""
    from scipy.stats import t as student_t  # imported when a comparison is made: scipy is slow

    pairs = [TaskPair(task_id=task, a=a_counts[task], b=b_counts[task])
             for task in sorted(set(a_counts) & set(b_counts))]
    unpaired = sorted(set(a_counts) ^ set(b_counts))
    common = dict(a=a, b=b, tasks=pairs, unpaired=unpaired, confidence=confidence)
    n = len(pairs)
    if n < 2:
        return Comparison(**common, mean=None, lo=None, hi=None, se=None, verdict="too few tasks")
    diffs = [p.diff for p in pairs]
    mean = sum(diffs) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) / math.sqrt(n)
    se = max(spread, rollout_se(pairs))
    half = student_t.ppf(1 - (1 - confidence) / 2, n - 1) * se
    lo, hi = max(-1.0, mean - half), min(1.0, mean + half)
    verdict: Verdict = "better" if lo > 0 else "worse" if hi < 0 else "no difference shown"
    return Comparison(**common, mean=mean, lo=lo, hi=hi, se=se, verdict=verdict)


def rollout_se(pairs: list[TaskPair]) -> float:
    """The standard error of the mean difference from the rollouts' binomial noise alone."""
    variance = sum(_adjusted_variance(p.a) + _adjusted_variance(p.b) for p in pairs)
    return math.sqrt(variance) / len(pairs)


def bonferroni(family_confidence: float, comparisons: int) -> float:
    """Each interval's level so that all `comparisons` hold together at `family_confidence`."""
    return 1 - (1 - family_confidence) / max(1, comparisons)


def _adjusted_variance(counts: TaskCounts) -> float:
    rate = (counts.passes + 1) / (counts.total + 2)
    return rate * (1 - rate) / (counts.total + 2)


def _rate(counts: TaskCounts) -> float:
    return counts.passes / counts.total


def _signed(value: float | None) -> str:
    """A pass-rate difference in percentage points."""
    return "n/a" if value is None else f"{100 * value:+.1f}"
