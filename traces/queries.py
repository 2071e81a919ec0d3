"""The reads later stages need from the trace store, as plain functions on a duckdb connection
returning pydantic rows. Pass rates never count infra_error rollouts (not the harness's fault)."""
from __future__ import annotations

import json
from typing import Literal, NamedTuple

import duckdb
from pydantic import BaseModel

from agent.events import Event

# A rollout counts towards pass rates unless the infrastructure failed it.
SCORED = "outcome <> 'infra_error'"
PASSED = "count(*) FILTER (WHERE outcome = 'pass')"


class PassCount(NamedTuple):
    passes: int
    n: int  # rollouts that were scored (infra_error excluded)


class TaskDelta(BaseModel):
    task_id: str
    passes_a: int
    n_a: int
    passes_b: int
    n_b: int

    @property
    def delta(self) -> float | None:
        """Pass-rate change from a to b; None when either side has no scored rollout."""
        if not (self.n_a and self.n_b):
            return None
        return self.passes_b / self.n_b - self.passes_a / self.n_a


class TaskCost(BaseModel):
    task_id: str
    rollouts: int
    tokens_in: int
    tokens_out: int
    duration_s: float  # summed over the task's rollouts
    mean_steps: float


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


class FailureClass(BaseModel):
    category: Literal["outcome", "exit_reason", "tool_error", "error"]
    name: str
    count: int  # rollouts for outcome/exit_reason, events for tool_error/error
    rollouts: int


class TaskIteration(BaseModel):
    iteration: int
    harness_commit: str
    passes: int
    n: int


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


def infra_errors(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int, split: str | None = None
) -> dict[str, int]:
    """{task_id: infra_error rollouts}, only tasks that had any."""
    extra, params = _split_filter(split)
    rows = con.execute(
        "SELECT task_id, count(*) FROM rollouts WHERE run_id = ? AND iteration = ? "
        f"AND outcome = 'infra_error'{extra} GROUP BY task_id ORDER BY task_id",
        [run_id, iteration, *params],
    ).fetchall()
    return dict(rows)


def task_deltas(
    con: duckdb.DuckDBPyConnection, run_id: str, commit_a: str, commit_b: str,
    split: str | None = None,
) -> list[TaskDelta]:
    """Per task, passes/n of every scored rollout of commit a and of commit b (all iterations)."""
    extra, params = _split_filter(split)
    rows = con.execute(
        f"""
        WITH counts AS (
            SELECT task_id, harness_commit, {PASSED} AS passes, count(*) AS n FROM rollouts
            WHERE run_id = ? AND harness_commit IN (?, ?) AND {SCORED}{extra}
            GROUP BY task_id, harness_commit
        )
        SELECT coalesce(a.task_id, b.task_id) AS task_id, coalesce(a.passes, 0), coalesce(a.n, 0),
               coalesce(b.passes, 0), coalesce(b.n, 0)
        FROM (SELECT * FROM counts WHERE harness_commit = ?) a
        FULL OUTER JOIN (SELECT * FROM counts WHERE harness_commit = ?) b USING (task_id)
        ORDER BY task_id
        """,
        [run_id, commit_a, commit_b, *params, commit_a, commit_b],
    ).fetchall()
    fields = ("task_id", "passes_a", "n_a", "passes_b", "n_b")
    return [TaskDelta(**dict(zip(fields, row))) for row in rows]


def token_time_by_task(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int
) -> list[TaskCost]:
    rows = con.execute(
        "SELECT task_id, count(*), sum(tokens_in), sum(tokens_out), sum(duration_s), avg(steps) "
        "FROM rollouts WHERE run_id = ? AND iteration = ? GROUP BY task_id ORDER BY task_id",
        [run_id, iteration],
    ).fetchall()
    fields = ("task_id", "rollouts", "tokens_in", "tokens_out", "duration_s", "mean_steps")
    return [TaskCost(**dict(zip(fields, row))) for row in rows]


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


def rollout_events(con: duckdb.DuckDBPyConnection, rollout_id: str) -> list[Event]:
    """The rollout's events in order, as the agent emitted them."""
    rows = con.execute(
        "SELECT seq, kind, name, content, data, tokens_in, tokens_out, duration_ms, ts "
        "FROM events WHERE rollout_id = ? ORDER BY seq",
        [rollout_id],
    ).fetchall()
    fields = ("seq", "kind", "name", "content", "data", "tokens_in", "tokens_out",
              "duration_ms", "ts")
    return [Event(**{**dict(zip(fields, row)), "data": json.loads(row[4])}) for row in rows]


def failure_classes(
    con: duckdb.DuckDBPyConnection, run_id: str, iteration: int
) -> list[FailureClass]:
    """What went wrong in an iteration, most frequent first: non-pass outcomes, the exit reasons of
    non-passing rollouts, tool errors (tool_result events carrying data.error.kind, named
    "tool:kind") and error events (by name)."""
    rows = con.execute(
        """
        WITH r AS (SELECT * FROM rollouts WHERE run_id = ? AND iteration = ?),
        e AS (SELECT events.* FROM events JOIN r USING (rollout_id))
        SELECT 'outcome', outcome, count(*), count(*) FROM r WHERE outcome <> 'pass' GROUP BY 2
        UNION ALL
        SELECT 'exit_reason', exit_reason, count(*), count(*) FROM r
            WHERE outcome <> 'pass' GROUP BY 2
        UNION ALL
        SELECT 'tool_error', name || ':' || (data->>'$.error.kind'), count(*),
               count(DISTINCT rollout_id)
            FROM e WHERE kind = 'tool_result' AND data->>'$.error.kind' IS NOT NULL GROUP BY 2
        UNION ALL
        SELECT 'error', name, count(*), count(DISTINCT rollout_id) FROM e
            WHERE kind = 'error' GROUP BY 2
        ORDER BY 3 DESC, 1, 2
        """,
        [run_id, iteration],
    ).fetchall()
    fields = ("category", "name", "count", "rollouts")
    return [FailureClass(**dict(zip(fields, row))) for row in rows]


def task_history(
    con: duckdb.DuckDBPyConnection, run_id: str, task_id: str
) -> list[TaskIteration]:
    """Per iteration (and harness commit) the task's passes/n: the record flips are read from."""
    rows = con.execute(
        f"SELECT iteration, harness_commit, {PASSED}, count(*) FROM rollouts "
        f"WHERE run_id = ? AND task_id = ? AND {SCORED} "
        "GROUP BY iteration, harness_commit ORDER BY iteration, harness_commit",
        [run_id, task_id],
    ).fetchall()
    fields = ("iteration", "harness_commit", "passes", "n")
    return [TaskIteration(**dict(zip(fields, row))) for row in rows]
