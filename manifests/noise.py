"""Per-task pass counts and the noise model (how often a task's outcome changes with the harness
unchanged), from traces/queries.py's reads of the `rollouts` table. Judging changes with them is
attribution.py's job."""
from __future__ import annotations

from collections import defaultdict

import duckdb
from pydantic import BaseModel, ConfigDict, Field, model_validator

from traces.queries import evaluation_groups, pass_counts


class TaskCounts(BaseModel):
    """Passes out of judged rollouts of one task in one evaluation (infra errors are not judged)."""

    model_config = ConfigDict(frozen=True)

    passes: int = Field(ge=0)
    total: int = Field(gt=0)

    @model_validator(mode="after")
    def _passes_within_total(self) -> TaskCounts:
        if self.passes > self.total:
            raise ValueError(f"passes {self.passes} exceed total {self.total}")
        return self

    def __str__(self) -> str:
        return f"{self.passes}/{self.total}"

    @property
    def mixed(self) -> bool:
        return 0 < self.passes < self.total

    def plus(self, extra: TaskCounts) -> TaskCounts:
        """These counts with extra rollouts of the same harness added (borderline re-runs)."""
        return TaskCounts(passes=self.passes + extra.passes, total=self.total + extra.total)


class NoiseModel(BaseModel):
    """Per task: comparisons of two evaluations of the same harness commit, how many differed
    (flips), and how many evaluations had a mixed outcome (0 < passes < k)."""

    model_config = ConfigDict(frozen=True)

    comparisons: dict[str, int] = Field(default_factory=dict)
    flips: dict[str, int] = Field(default_factory=dict)
    mixed: dict[str, int] = Field(default_factory=dict)

    def unstable(self, task_id: str) -> bool:
        return self.flips.get(task_id, 0) > 0 or self.mixed.get(task_id, 0) > 0

    def flip_rate(self, task_id: str) -> float:
        compared = self.comparisons.get(task_id, 0)
        return self.flips.get(task_id, 0) / compared if compared else 0.0

    def band(self) -> float:
        """Expected number of tasks whose outcome changes by chance between two evaluations."""
        return sum(self.flip_rate(task) for task in self.comparisons)


def noise_from_db(
    con: duckdb.DuckDBPyConnection, run_id: str, k: int, upto_iteration: int
) -> NoiseModel:
    """The flip record up to and including `upto_iteration` (the 'before' evaluation).

    An evaluation is k attempts of one task under one commit; the baseline's 2k attempts are two
    evaluations (attempt // k). Partial groups (borderline extras, missing rollouts) are not
    evaluations. Consecutive evaluations of the same commit that differ in passes are a flip.
    """
    series: dict[tuple[str, str], list[int]] = defaultdict(list)
    mixed: dict[str, int] = defaultdict(int)
    for commit, task, passes, total in evaluation_groups(con, run_id, k, upto_iteration):
        if total != k:
            continue
        series[(commit, task)].append(passes)
        mixed[task] += int(0 < passes < k)
    comparisons: dict[str, int] = defaultdict(int)
    flips: dict[str, int] = defaultdict(int)
    for (_commit, task), passes in series.items():
        comparisons[task] += len(passes) - 1
        flips[task] += sum(a != b for a, b in zip(passes, passes[1:]))
    return NoiseModel(comparisons=dict(comparisons), flips=dict(flips), mixed=dict(mixed))


def counts_from_db(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int, split: str | None = "train"
) -> dict[str, TaskCounts]:
    """Per task pass counts of one iteration's evaluation (every judged attempt, extras included).
    Train tasks by default: predictions may only name them, so only they judge a change."""
    return {task: TaskCounts(passes=c.passes, total=c.n)
            for task, c in pass_counts(con, run_id, iteration, split).items()}
