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
by simulation.

Infra errors are left out of the pass rates but not out of the verdict: each side's count (after
the runner's reruns) is shown, and a B whose infra-error rate is higher than A's is "worse"
whatever its pass rates say. Any rise, not a significant one: a harness that turned some of its
failures into infra errors would gain in pass rate exactly what it hid, so a test that let a few
through would let a few failures go unscored; a rollout left an infra error after its reruns is
rare enough that the rule costs an honest harness little.

`pair_interval` asks the narrower question a trial asks: did B raise the pass rate on these tasks,
held fixed? Its unit is the pair (the i-th rollout of a task under A and under B, run on common
sampling seeds), as in the trial's sign test, and its interval is Newcombe's (1998, method 10:
the two arms' Wilson intervals combined through the pairs' correlation). It assumes the pairs are
alike; pairs from tasks that differ (one passes always, one never) make it wider, not narrower,
because the spread of the tasks' own gains then counts as noise (simulated in the tests: 96.5% of
95% intervals held the true gain). It says nothing about a task not in the trial; `compare` does."""
from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from evoharness.errors import EvoError
from evoharness.manifests.history import TaskCounts

METHOD = ("paired by task; mean of per-task pass-rate differences; Student t interval over tasks "
          "(n-1 df), standard error at least the rollouts' binomial noise (Agresti-Caffo)")
Verdict = Literal["better", "worse", "no difference shown", "too few tasks"]


class InfraErrors(BaseModel):
    """One harness's rollouts that stayed infra errors through their reruns, out of all it ran."""

    model_config = ConfigDict(frozen=True)

    errors: int = Field(0, ge=0)
    rollouts: int = Field(0, ge=0)

    @property
    def rate(self) -> float:
        return self.errors / self.rollouts if self.rollouts else 0.0

    def __str__(self) -> str:
        return f"{self.errors}/{self.rollouts}"

    def plus(self, other: InfraErrors) -> InfraErrors:
        return InfraErrors(errors=self.errors + other.errors,
                           rollouts=self.rollouts + other.rollouts)


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
    a_infra: InfraErrors = Field(default_factory=InfraErrors)
    b_infra: InfraErrors = Field(default_factory=InfraErrors)

    @property
    def n(self) -> int:
        return len(self.tasks)

    @property
    def infra_rose(self) -> bool:
        """B left a larger share of its rollouts infra errors than A: a regression."""
        return self.b_infra.rate > self.a_infra.rate

    def sentence(self) -> str:
        """The verdict in words: "better by +25.0 points [+5.0, +45.0] (95% interval, 7 tasks)"."""
        if self.infra_rose:
            return (f"worse: more infra errors ({self.b_infra} against {self.a_infra}), a "
                    f"regression whatever the pass rates (pass rates: {self._interval()})")
        if self.mean is None:
            return self._interval()
        if self.verdict == "no difference shown":
            return f"no difference shown: {self._interval()}"
        return f"{self.verdict} by {self._interval()}"

    def _interval(self) -> str:
        if self.mean is None:
            return f"too few tasks to say ({self.n} paired)"
        return (f"{_signed(self.mean)} points [{_signed(self.lo)}, {_signed(self.hi)}] "
                f"({100 * self.confidence:.4g}% interval, {self.n} tasks)")


def compare(a: str, a_counts: Mapping[str, TaskCounts], b: str,
            b_counts: Mapping[str, TaskCounts], *, confidence: float,
            a_infra: InfraErrors | None = None, b_infra: InfraErrors | None = None) -> Comparison:
    """B against A on the tasks both scored (see the module's docstring for the method); with
    each side's infra errors, a B that has more of them is worse."""
    from scipy.stats import t as student_t  # imported when a comparison is made: scipy is slow

    pairs = [TaskPair(task_id=task, a=a_counts[task], b=b_counts[task])
             for task in sorted(set(a_counts) & set(b_counts))]
    unpaired = sorted(set(a_counts) ^ set(b_counts))
    a_infra, b_infra = a_infra or InfraErrors(), b_infra or InfraErrors()
    common = dict(a=a, b=b, tasks=pairs, unpaired=unpaired, confidence=confidence,
                  a_infra=a_infra, b_infra=b_infra)
    rose = b_infra.rate > a_infra.rate
    n = len(pairs)
    if n < 2:
        return Comparison(**common, mean=None, lo=None, hi=None, se=None,
                          verdict="worse" if rose else "too few tasks")
    diffs = [p.diff for p in pairs]
    mean = sum(diffs) / n
    spread = math.sqrt(sum((d - mean) ** 2 for d in diffs) / (n - 1)) / math.sqrt(n)
    se = max(spread, rollout_se(pairs))
    half = student_t.ppf(1 - (1 - confidence) / 2, n - 1) * se
    lo, hi = max(-1.0, mean - half), min(1.0, mean + half)
    verdict: Verdict = "worse" if rose or hi < 0 else "better" if lo > 0 else "no difference shown"
    return Comparison(**common, mean=mean, lo=lo, hi=hi, se=se, verdict=verdict)


class PairInterval(BaseModel):
    """B's pass rate minus A's over paired rollouts, with Newcombe's interval and the pairs it
    rests on: wins (B passed, A failed), losses (the other way) and all pairs."""

    model_config = ConfigDict(frozen=True)

    pairs: int = Field(gt=0)
    wins: int = Field(ge=0)
    losses: int = Field(ge=0)
    confidence: float
    mean: float
    lo: float
    hi: float

    def sign_test_p(self) -> float:
        """The exact one-sided sign test (McNemar) of "B raises no pass rate": the chance of this
        many wins or more among the discordant pairs if each were a coin toss."""
        from scipy.stats import binomtest

        discordant = self.wins + self.losses
        return binomtest(self.wins, discordant, alternative="greater").pvalue if discordant else 1.0


def pair_interval(passed: Sequence[tuple[bool, bool]], *, confidence: float) -> PairInterval:
    """B - A over `passed`, one (A passed, B passed) per pair (see the module's docstring)."""
    both = sum(a and b for a, b in passed)
    wins = sum(b and not a for a, b in passed)
    losses = sum(a and not b for a, b in passed)
    return pair_interval_of_counts(both, wins, losses, len(passed) - both - wins - losses,
                                   confidence=confidence)


def pair_interval_of_counts(both: int, wins: int, losses: int, neither: int, *,
                            confidence: float) -> PairInterval:
    """`pair_interval` from the pairs' four counts: both passed, only B (wins), only A (losses),
    neither."""
    from scipy.stats import binomtest

    counts = dict(both=both, wins=wins, losses=losses, neither=neither)
    if negative := [name for name, count in counts.items() if count < 0]:
        raise EvoError("pair counts must not be negative", field=negative[0], value=counts)
    n = sum(counts.values())
    if n == 0:
        raise EvoError("no pairs to compare", field="passed", value=0)
    rate_a, rate_b = (both + losses) / n, (both + wins) / n

    def wilson(passes: int) -> tuple[float, float]:
        ci = binomtest(passes, n).proportion_ci(confidence_level=confidence, method="wilson")
        return ci.low, ci.high

    (lo_a, hi_a), (lo_b, hi_b) = wilson(both + losses), wilson(both + wins)
    phi = _continuity_corrected_phi(both, wins, losses, neither)
    below_b, above_a = rate_b - lo_b, hi_a - rate_a
    above_b, below_a = hi_b - rate_b, rate_a - lo_a
    mean = rate_b - rate_a
    lo = mean - math.sqrt(below_b ** 2 - 2 * phi * below_b * above_a + above_a ** 2)
    hi = mean + math.sqrt(below_a ** 2 - 2 * phi * below_a * above_b + above_b ** 2)
    return PairInterval(pairs=n, wins=wins, losses=losses, confidence=confidence, mean=mean,
                        lo=max(-1.0, lo), hi=min(1.0, hi))


def _continuity_corrected_phi(both: int, wins: int, losses: int, neither: int) -> float:
    """The pairs' phi correlation as Newcombe's method 10 takes it: a positive association is
    shrunk by half a pair per pair (n/2) and never below 0; no margin, no correlation."""
    n = both + wins + losses + neither
    margins = (both + wins) * (losses + neither) * (both + losses) * (wins + neither)
    if not margins:
        return 0.0
    cross = both * neither - wins * losses
    corrected = cross - n / 2 if cross > n / 2 else min(cross, 0)
    return corrected / math.sqrt(margins)


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
