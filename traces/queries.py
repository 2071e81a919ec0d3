"""The reads later stages need from the trace store, as plain functions on a duckdb connection
returning pydantic rows. Pass rates never count infra_error rollouts (not the harness's fault)."""
from __future__ import annotations

from typing import NamedTuple

import duckdb
from pydantic import BaseModel

# A rollout counts towards pass rates unless the infrastructure failed it.
SCORED = "outcome <> 'infra_error'"
PASSED = "count(*) FILTER (WHERE outcome = 'pass')"


class PassCount(NamedTuple):
    passes: int
    n: int  # rollouts that were scored (infra_error excluded)


class IterationTotals(BaseModel):
    iteration: int
    rollouts: int
    infra_errors: int
    pass_rate_train: float | None  # None when the split had no scored rollout
    pass_rate_heldout: float | None
    tokens_in: int
    tokens_out: int
    rollout_time_s: float  # sum of rollout durations
    wall_time_s: float  # first start to last finish


def _split_filter(split: str | None) -> tuple[str, list[str]]:
    return ("", []) if split is None else (" AND split = ?", [split])


def pass_counts(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int, split: str | None = None
) -> dict[str, PassCount]:
    """{task_id: (passes, n)}; a task whose every rollout was an infra_error is left out."""
    extra, params = _split_filter(split)
    rows = con.execute(
        f"SELECT task_id, {PASSED}, count(*) FROM rollouts "
        f"WHERE run_id = ? AND iteration = ? AND {SCORED}{extra} GROUP BY task_id ORDER BY task_id",
        [run_id, iteration, *params],
    ).fetchall()
    return {task: PassCount(passes, n) for task, passes, n in rows}


def evaluation_groups(
    con: duckdb.DuckDBPyConnection, run_id: str, k: int, upto_iteration: int
) -> list[tuple[str, str, int, int]]:
    """(harness_commit, task_id, passes, total) per group of k consecutive attempts of one task in
    one iteration, up to `upto_iteration`, in order (scored rollouts only: an infra error says
    nothing about the harness). The noise model compares groups of the same commit."""
    rows = con.execute(
        f"SELECT harness_commit, task_id, {PASSED}, count(*) FROM "
        f"(SELECT *, attempt // ? AS part FROM rollouts WHERE run_id = ? AND iteration <= ? "
        f"AND {SCORED}) GROUP BY harness_commit, task_id, iteration, part "
        "ORDER BY harness_commit, task_id, iteration, part",
        [k, run_id, upto_iteration],
    ).fetchall()
    return [tuple(row) for row in rows]


def iteration_totals(con: duckdb.DuckDBPyConnection, run_id: str) -> list[IterationTotals]:
    def rate(split: str) -> str:
        scored = f"{SCORED} AND split = '{split}'"
        return (f"(count(*) FILTER (WHERE outcome = 'pass' AND split = '{split}'))"
                f" / nullif(count(*) FILTER (WHERE {scored}), 0)")

    rows = con.execute(
        f"""
        SELECT iteration, count(*), count(*) FILTER (WHERE outcome = 'infra_error'),
               {rate('train')}, {rate('heldout')}, sum(tokens_in), sum(tokens_out),
               sum(duration_s), max(started_at + duration_s) - min(started_at)
        FROM rollouts WHERE run_id = ? GROUP BY iteration ORDER BY iteration
        """,
        [run_id],
    ).fetchall()
    fields = IterationTotals.model_fields
    return [IterationTotals(**dict(zip(fields, row))) for row in rows]
