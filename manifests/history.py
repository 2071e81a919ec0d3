"""What the evaluations of one harness tree say about each train task: pass counts pooled over
every evaluation of that git tree, and the Beta posterior of its pass probability. Reading the
rows (train only, by tree) is the caller's; using the posterior to pick screens is screen.py's.

Why by tree and not by commit: a revert commit restores an earlier tree exactly, so its rollouts
are repeats of that harness and pool with the earlier ones. Why a posterior and not a
stable/unstable flag: one mixed evaluation long ago should weigh as one observation, not forever.
Held-out rows never enter (the caller passes train counts only; `TreeHistory` cannot tell them
apart, which is why it takes counts and not rollout rows).
"""
from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from .noise import TaskCounts
from .sequential import binom_cdf


class TreeHistory(BaseModel):
    """Per train task, the pass count over every evaluation of one git tree."""

    model_config = ConfigDict(frozen=True)

    tree: str = Field(min_length=1)
    counts: dict[str, TaskCounts] = Field(default_factory=dict)

    def passes_fails(self, task_id: str) -> tuple[int, int]:
        """(passes, fails) of the task under this tree; (0, 0) when it was never judged."""
        c = self.counts.get(task_id)
        return (0, 0) if c is None else (c.passes, c.total - c.passes)

    def posterior_mean(self, task_id: str) -> float:
        """Mean of Beta(1 + passes, 1 + fails): uniform prior, so no history means 0.5."""
        passes, fails = self.passes_fails(task_id)
        return (passes + 1) / (passes + fails + 2)

    def posterior_quantile(self, task_id: str, level: float) -> float:
        """The `level` quantile of Beta(1 + passes, 1 + fails)."""
        passes, fails = self.passes_fails(task_id)
        return beta_quantile(passes + 1, fails + 1, level)


@lru_cache(maxsize=8192)
def beta_quantile(a: int, b: int, level: float) -> float:
    """Quantile of Beta(a, b) for whole a, b >= 1, by bisection on
    P(Beta(a, b) <= x) = P(Bin(a + b - 1, x) >= a)."""
    lo, hi = 0.0, 1.0
    for _ in range(50):
        mid = (lo + hi) / 2
        below = 1.0 - binom_cdf(a - 1, a + b - 1, mid) if 0.0 < mid < 1.0 else float(mid >= 1.0)
        if below < level:
            lo = mid
        else:
            hi = mid
    return hi
