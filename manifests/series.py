"""A pre-registered series of trials of one thing (a library entry, a remedy): the family's size
and its error rate are fixed before the first trial, and so is each trial's level (alpha
spending). Running a trial at its level is the caller's (benchmarks/remedies.py, the library's
record of an entry); the trial itself is trial.py's.

Why. A claim read off the best of many trials is only as good as the family's error rate. The
rescue's record (issue 60) moved its Bonferroni level from alpha/5 to alpha/8 as trials were added,
which bounds nothing: about 0.28 family-wise over its ten trials, each counted at the level it
would have been claimed at. Here the levels are written down first and sum to at most the family's
alpha, so by the union bound the chance that any trial of the family falsely rejects is at most
alpha, whatever the trials' dependence and however their results come out. A trial past the
family's size has no level: the series is spent, and a new claim needs a new registration."""
from __future__ import annotations

import time
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

from evoharness.errors import EvoError

Spending = Literal["equal", "halving"]


class SeriesPlan(BaseModel):
    """The family: `size` trials, family-wise error at most `alpha`, and the level of each trial
    in order (`levels`, fixed at registration: "equal" spends alpha / size on each; "halving"
    spends alpha / 2 on the first, alpha / 4 on the second, ..., the last two alike, so the
    first trials, which decide whether more are worth running, get the most)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)
    size: int = Field(ge=1)
    alpha: float = Field(gt=0, lt=0.5)
    spending: Spending = "equal"
    levels: list[float]
    registered_at: float

    @model_validator(mode="after")
    def _levels_spend_at_most_alpha(self) -> SeriesPlan:
        if len(self.levels) != self.size:
            raise ValueError(f"{len(self.levels)} levels for a family of {self.size}")
        if any(level <= 0 for level in self.levels):
            raise ValueError("every level must be above 0")
        if sum(self.levels) > self.alpha * (1 + 1e-9):
            raise ValueError(f"the levels sum to {sum(self.levels):.4g}, above alpha {self.alpha}")
        return self

    def level(self, index: int) -> float:
        """The level of the series' trial number `index` (0 = the first)."""
        if not 0 <= index < self.size:
            raise EvoError(f"the series is spent: its family of {self.size} trial(s) is used up",
                           field="series", value=self.name,
                           hint="register a new series (a new family, with its own alpha) "
                                "before another trial of it")
        return self.levels[index]

    def line(self) -> str:
        levels = ", ".join(f"{level:.4g}" for level in self.levels)
        return (f"series {self.name}: {self.size} trial(s), family-wise alpha {self.alpha:g} "
                f"({self.spending} spending: {levels})")


def register(name: str, size: int, alpha: float, spending: Spending = "equal",
             at: float | None = None) -> SeriesPlan:
    """A new series with its levels fixed now."""
    if size < 1:
        raise EvoError("a series needs at least one trial", field="size", value=size)
    if spending == "equal":
        levels = [alpha / size] * size
    else:
        levels = [alpha / 2 ** (i + 1) for i in range(size - 1)] + [alpha / 2 ** max(size - 1, 1)]
        if size == 1:
            levels = [alpha]
    return SeriesPlan(name=name, size=size, alpha=alpha, spending=spending, levels=levels,
                      registered_at=time.time() if at is None else at)


class SeriesTrial(BaseModel):
    """One trial of the series as run: its number, its level, and per thing tried its decision
    and exact p-value (rejected at the level exactly when p <= level)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    index: int = Field(ge=0)
    run_id: str
    level: float
    results: dict[str, tuple[str, float]] = Field(default_factory=dict)  # id -> (decision, p)
    at: float


class SeriesRecord(BaseModel):
    """The registration and every trial run under it (a file a person commits)."""

    model_config = ConfigDict(extra="forbid")

    plan: SeriesPlan
    trials: list[SeriesTrial] = Field(default_factory=list)

    @property
    def next_index(self) -> int:
        return len(self.trials)

    def next_level(self) -> float:
        return self.plan.level(self.next_index)

    def add(self, run_id: str, results: dict[str, tuple[str, float]]) -> SeriesTrial:
        """Record the next trial, at the level the plan fixed for it."""
        trial = SeriesTrial(index=self.next_index, run_id=run_id, level=self.next_level(),
                            results=results, at=time.time())
        self.trials.append(trial)
        return trial
