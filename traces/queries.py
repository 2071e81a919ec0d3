"""The reads later stages need from the trace store, as plain functions on a duckdb connection
returning pydantic rows. Pass rates never count infra_error rollouts (not the harness's fault),
and an evaluation's figures never count the rollouts of a change's trial (they run other trees)."""
from __future__ import annotations

from typing import NamedTuple

import duckdb
from pydantic import BaseModel

# A rollout counts towards pass rates unless the infrastructure failed it.
SCORED = "outcome <> 'infra_error'"
PASSED = "count(*) FILTER (WHERE outcome = 'pass')"
# An evaluation of the head, not a rollout of a change's trial.
EVALUATION = "trial_change = ''"


class PassCount(NamedTuple):
    passes: int
    n: int  # rollouts that were scored (infra_error excluded)


class IterationTotals(BaseModel):
    iteration: int
    rollouts: int  # the evaluation's
    infra_errors: int  # the evaluation's
    pass_rate_train: float | None  # None when the split had no scored rollout
    pass_rate_heldout: float | None
    tokens_in: int  # every rollout of the iteration, its trials' included
    tokens_out: int
    rollout_time_s: float  # sum of rollout durations, trials included
    wall_time_s: float  # first start to last finish
    trial_rollouts: int = 0  # rollouts the iteration's trials ran


class TrialRollout(NamedTuple):
    change_id: str
    arm: str  # base | change
    task_id: str
    attempt: int
    outcome: str


def _split_filter(split: str | None) -> tuple[str, list[str]]:
    return ("", []) if split is None else (" AND split = ?", [split])


def pass_counts(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int, split: str | None = None
) -> dict[str, PassCount]:
    """{task_id: (passes, n)} of the iteration's evaluation; a task whose every rollout was an
    infra_error is left out."""
    extra, params = _split_filter(split)
    rows = con.execute(
        f"SELECT task_id, {PASSED}, count(*) FROM rollouts "
        f"WHERE run_id = ? AND iteration = ? AND {SCORED} AND {EVALUATION}{extra} "
        "GROUP BY task_id ORDER BY task_id",
        [run_id, iteration, *params],
    ).fetchall()
    return {task: PassCount(passes, n) for task, passes, n in rows}


def infra_errors(con: duckdb.DuckDBPyConnection, run_id: str, iteration: int
                 ) -> tuple[int, int]:
    """(infra errors, rollouts) of the iteration's evaluation: what pass_counts leaves out, and
    out of how many."""
    errors, total = con.execute(
        f"SELECT count(*) FILTER (WHERE NOT {SCORED}), count(*) FROM rollouts "
        f"WHERE run_id = ? AND iteration = ? AND {EVALUATION}",
        [run_id, iteration],
    ).fetchone()
    return errors, total


def evaluated_counts(con: duckdb.DuckDBPyConnection, run_id: str
                     ) -> list[tuple[str, str, int, int]]:
    """(harness_commit, task_id, passes, scored) over every evaluation of the run, train tasks
    only: what a tree's history is pooled from (never held-out rows, never a trial's rollouts)."""
    rows = con.execute(
        f"SELECT harness_commit, task_id, {PASSED}, count(*) FROM rollouts "
        f"WHERE run_id = ? AND split = 'train' AND {SCORED} AND {EVALUATION} "
        "GROUP BY harness_commit, task_id ORDER BY harness_commit, task_id",
        [run_id],
    ).fetchall()
    return [tuple(row) for row in rows]


def trial_rollouts(con: duckdb.DuckDBPyConnection, run_id: str, iteration: int
                   ) -> list[TrialRollout]:
    """Every stored rollout of the iteration's trials (infra errors included), in attempt order."""
    rows = con.execute(
        "SELECT trial_change, trial_arm, task_id, attempt, outcome FROM rollouts "
        f"WHERE run_id = ? AND iteration = ? AND NOT {EVALUATION} "
        "ORDER BY trial_change, trial_arm, task_id, attempt",
        [run_id, iteration],
    ).fetchall()
    return [TrialRollout(*row) for row in rows]


def iteration_totals(con: duckdb.DuckDBPyConnection, run_id: str) -> list[IterationTotals]:
    def rate(split: str) -> str:
        scored = f"{SCORED} AND {EVALUATION} AND split = '{split}'"
        return (f"(count(*) FILTER (WHERE outcome = 'pass' AND {scored}))"
                f" / nullif(count(*) FILTER (WHERE {scored}), 0)")

    rows = con.execute(
        f"""
        SELECT iteration, count(*) FILTER (WHERE {EVALUATION}),
               count(*) FILTER (WHERE outcome = 'infra_error' AND {EVALUATION}),
               {rate('train')}, {rate('heldout')}, sum(tokens_in), sum(tokens_out),
               sum(duration_s), max(started_at + duration_s) - min(started_at),
               count(*) FILTER (WHERE NOT {EVALUATION})
        FROM rollouts WHERE run_id = ? GROUP BY iteration ORDER BY iteration
        """,
        [run_id],
    ).fetchall()
    fields = IterationTotals.model_fields
    return [IterationTotals(**dict(zip(fields, row))) for row in rows]


class RunSpend(NamedTuple):
    rollouts: int  # every rollout of the run: evaluations (train and held-out) and trials
    train_rollouts: int  # those on train tasks (evaluations and trials), infra errors included
    tokens: int  # the rollouts' tokens, in and out
    busy_seconds: float  # wall time while at least one of them ran (their intervals' union)


def run_spend(con: duckdb.DuckDBPyConnection, run_id: str) -> RunSpend:
    """What the run's rollouts cost, infra errors included (they took their time too)."""
    row = con.execute(
        "SELECT count(*), count(*) FILTER (WHERE split = 'train'), "
        "coalesce(sum(tokens_in + tokens_out), 0) FROM rollouts WHERE run_id = ?",
        [run_id],
    ).fetchone()
    return RunSpend(*row, busy_seconds(con, run_id))


def busy_seconds(con: duckdb.DuckDBPyConnection, run_id: str) -> float:
    """The union of the run's rollout intervals, in seconds: time the machine worked on its
    rollouts, however many processes it took (a phase's record times only the process that
    finished it) and however long the run stood stopped between them."""
    return con.execute(
        """
        WITH spans AS (
            SELECT started_at AS s, started_at + duration_s AS e,
                   max(started_at + duration_s) OVER (ORDER BY started_at ROWS BETWEEN
                       UNBOUNDED PRECEDING AND 1 PRECEDING) AS reached
            FROM rollouts WHERE run_id = ?),
        islands AS (
            SELECT s, e, sum(CASE WHEN reached IS NULL OR s > reached THEN 1 ELSE 0 END)
                       OVER (ORDER BY s ROWS UNBOUNDED PRECEDING) AS island
            FROM spans)
        SELECT coalesce(sum(e - s), 0) FROM (
            SELECT min(s) AS s, max(e) AS e FROM islands GROUP BY island)
        """,
        [run_id],
    ).fetchone()[0]


def rollout_counts(con: duckdb.DuckDBPyConnection, run_id: str, rollout_ids: list[str]
                   ) -> dict[str, PassCount]:
    """{task_id: (passes, n)} over exactly these rollouts, scored as pass_counts scores an
    evaluation's; a task whose every one of them was an infra_error is left out."""
    rows = con.execute(
        f"SELECT task_id, {PASSED}, count(*) FROM rollouts "
        f"WHERE run_id = ? AND list_contains(?, rollout_id) AND {SCORED} "
        "GROUP BY task_id ORDER BY task_id",
        [run_id, rollout_ids],
    ).fetchall()
    return {task: PassCount(passes, n) for task, passes, n in rows}


class ModelTimeTotals(BaseModel):
    """One iteration's model calls (its evaluation and its trials), summed from the rollouts'
    totals: where the model time went. None where no server reported the figure."""

    iteration: int
    model_calls: int
    model_s: float
    tokens_read: int | None
    tokens_cached: int | None
    prefill_s: float | None
    decode_s: float | None
    tokens_out: int
    stalled_calls: int

    @property
    def hit_rate(self) -> float | None:
        return cache_hit_rate(self.tokens_read, self.tokens_cached)


def cache_hit_rate(read: int | None, cached: int | None) -> float | None:
    """The share of prompt tokens the server took from its cache; None when it did not say."""
    if read is None or cached is None or read + cached == 0:
        return None
    return cached / (read + cached)


def model_time_totals(con: duckdb.DuckDBPyConnection, run_id: str) -> list[ModelTimeTotals]:
    rows = con.execute(
        """
        SELECT iteration, sum(model_calls), sum(model_s), sum(tokens_read), sum(tokens_cached),
               sum(prefill_s), sum(decode_s), sum(tokens_out), sum(stalled_calls)
        FROM rollouts WHERE run_id = ? GROUP BY iteration ORDER BY iteration
        """,
        [run_id],
    ).fetchall()
    fields = ModelTimeTotals.model_fields
    return [ModelTimeTotals(**dict(zip(fields, row))) for row in rows]
