"""The SQL behind the evidence: per-task stats, failure classes, verifier lines, condensed events.

Every query starts from the visible rollouts (this run, the scope's split: train for the
evidence, not a hidden task, and an evaluation, not a change's trial, which ran other trees), so
validation and held-out rows never reach the evidence.
Rendering is left to the other debugger modules.
"""
from __future__ import annotations

from typing import Any

import duckdb
from pydantic import BaseModel, ConfigDict

from evoharness.traces.leak import FAILING_LINE_REGEX

HEAD_LINES = 10  # lines kept from the start and the end of one event's content
MAX_EVENT_CHARS = 1200  # then characters, for outputs that are one huge line
HEAD_EVENTS = 20  # events kept from the start and the end of a rollout ...
MID_ERRORS = 10  # ... plus this many error events from the part in between
MAX_FAILING_LINES = 20  # verifier lines kept per rollout
MAX_LINE_CHARS = 200


class Scope(BaseModel):
    """Which rollouts the evidence is about, and which it must never see."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    iteration: int
    previous: int | None
    hidden: tuple[str, ...] = ()
    split: str = "train"  # the evidence's; the trials pick validation tasks with "validation"

    def params(self) -> dict[str, Any]:
        return {"run": self.run_id, "it": self.iteration, "prev": self.previous,
                "hidden": list(self.hidden), "split": self.split}


VISIBLE = """
WITH v AS (
    SELECT * FROM rollouts
    WHERE run_id = $run AND split = $split AND NOT list_contains($hidden::VARCHAR[], task_id)
      AND trial_change = ''
)"""


def rows(
    con: duckdb.DuckDBPyConnection, sql: str, scope: Scope, **extra: Any
) -> list[dict[str, Any]]:
    """Run `sql` (which may use the CTE `v`, $run/$it/$prev/$hidden and `extra` parameters) and
    return dict rows. DuckDB refuses unused named parameters, hence the filter."""
    params = {k: val for k, val in (scope.params() | extra).items() if f"${k}" in VISIBLE + sql}
    cursor = con.execute(VISIBLE + sql, params)
    names = [d[0] for d in cursor.description]
    return [dict(zip(names, row)) for row in cursor.fetchall()]


TASK_STATS = """,
cur AS (
    SELECT task_id, count(*) AS k, count(*) FILTER (WHERE outcome = 'pass') AS passes,
           avg(tokens_in + tokens_out) AS tokens, avg(duration_s) AS seconds, avg(steps) AS steps
    FROM v WHERE iteration = $it GROUP BY task_id),
prev AS (
    SELECT task_id, avg((outcome = 'pass')::INT) AS prev_p1 FROM v WHERE iteration = $prev
    GROUP BY task_id),
hist AS (
    SELECT task_id, bool_and(outcome = 'pass') OR bool_and(outcome <> 'pass') AS stable,
           count(DISTINCT iteration) AS iterations
    FROM v WHERE iteration <= $it GROUP BY task_id)
SELECT cur.*, passes / k AS p1, prev_p1, passes / k - prev_p1 AS delta, stable, iterations
FROM cur JOIN hist USING (task_id) LEFT JOIN prev USING (task_id)
ORDER BY task_id
"""

ROLLOUTS = """
SELECT rollout_id, task_id, attempt, outcome, reward, steps, tokens_in + tokens_out AS tokens,
       duration_s, exit_reason
FROM v WHERE iteration = $it ORDER BY task_id, attempt
"""

EXIT_REASONS = """
SELECT outcome, exit_reason, count(*) AS rollouts, count(DISTINCT task_id) AS tasks
FROM v WHERE iteration = $it AND outcome <> 'pass'
GROUP BY ALL ORDER BY rollouts DESC, exit_reason
"""

# Error events and tool results that carry a structured ToolError (agent/tools.py), one label each.
ERRORS = """,
errs AS (
    SELECT v.task_id, e.rollout_id, e.seq,
           CASE WHEN e.kind = 'error' THEN e.name
                ELSE e.name || ': ' || json_extract_string(e.data, '$.error.kind') END AS name,
           coalesce(json_extract_string(e.data, '$.error.message'), e.content) AS text
    FROM events e JOIN v USING (rollout_id)
    WHERE v.iteration = $it AND (e.kind = 'error' OR (e.kind = 'tool_result'
          AND json_extract_string(e.data, '$.error.kind') IS NOT NULL)))
"""

ERROR_CLASSES = ERRORS + """
SELECT name, count(*) AS events, count(DISTINCT task_id) AS tasks,
       left(split_part(min(text), chr(10), 1), 160) AS example
FROM errs GROUP BY name ORDER BY events DESC, name
"""

# The verifier's failing lines, one row each; the only way verifier output reaches the evidence.
FAILING_LINES = f""",
split AS (
    SELECT rollout_id, task_id, string_split(replace(verifier_tail, chr(13), ''), chr(10)) AS ls
    FROM v WHERE iteration = $it AND outcome <> 'pass'),
lines AS (
    SELECT rollout_id, task_id, unnest(ls) AS line, generate_subscripts(ls, 1) AS line_no
    FROM split),
failing AS (
    SELECT rollout_id, task_id, left(rtrim(line), {MAX_LINE_CHARS}) AS line,
           row_number() OVER (PARTITION BY rollout_id ORDER BY line_no) AS n
    FROM lines WHERE regexp_matches(line, '{FAILING_LINE_REGEX}'))
"""

VERIFIER_LINES = FAILING_LINES + f"""
SELECT rollout_id, string_agg(line, chr(10) ORDER BY n) AS lines
FROM failing WHERE n <= {MAX_FAILING_LINES} GROUP BY rollout_id
"""

VERIFIER_CLASSES = FAILING_LINES + """
SELECT trim(line) AS line, count(DISTINCT rollout_id) AS rollouts, count(DISTINCT task_id) AS tasks
FROM failing GROUP BY 1 ORDER BY rollouts DESC, line
"""

TASK_ERRORS = ERRORS + """
SELECT task_id, rollout_id, seq, name, left(split_part(text, chr(10), 1), 200) AS text
FROM errs ORDER BY task_id, rollout_id, seq
"""

# Head and tail of every rollout plus a few errors between, each content cut to head and tail
# lines: the condensing happens here so Python only formats what is kept.
CONDENSED_EVENTS = f""",
e AS (
    SELECT *, row_number() OVER w AS rn, count(*) OVER (PARTITION BY rollout_id) AS total,
           sum(failed::INT) OVER w AS error_rank
    FROM (SELECT e.*, json_extract_string(e.data, '$.error.kind') AS tool_error,
                 e.kind = 'error' OR tool_error IS NOT NULL AS failed
          FROM events e JOIN v USING (rollout_id) WHERE v.iteration = $it)
    WINDOW w AS (PARTITION BY rollout_id ORDER BY seq)),
kept AS (
    SELECT *, string_split(rtrim(content, chr(10)), chr(10)) AS lines FROM e
    WHERE rn <= {HEAD_EVENTS} OR rn > total - {HEAD_EVENTS}
       OR (failed AND error_rank <= {MID_ERRORS})),
cut AS (
    SELECT *, CASE WHEN len(lines) > {2 * HEAD_LINES}
        THEN array_to_string(lines[1:{HEAD_LINES}], chr(10)) || chr(10)
             || '[... ' || (len(lines) - {2 * HEAD_LINES}) || ' lines cut ...]' || chr(10)
             || array_to_string(lines[-{HEAD_LINES}:], chr(10))
        ELSE rtrim(content, chr(10)) END AS text
    FROM kept)
SELECT rollout_id, seq, rn, total, kind, name, data::VARCHAR AS data, tokens_in, tokens_out,
       tool_error,
       CASE WHEN length(text) > {MAX_EVENT_CHARS}
            THEN left(text, {MAX_EVENT_CHARS // 2}) || ' [... '
                 || (length(text) - {MAX_EVENT_CHARS}) || ' chars cut ...] '
                 || right(text, {MAX_EVENT_CHARS // 2})
            ELSE text END AS text
FROM cut ORDER BY rollout_id, seq
"""

TOOL_SEQUENCES = """
SELECT e.rollout_id, e.seq, e.name, e.data::VARCHAR AS data
FROM events e JOIN v USING (rollout_id)
WHERE v.iteration = $it AND e.kind = 'tool_call' AND list_contains($ids::VARCHAR[], e.rollout_id)
ORDER BY e.rollout_id, e.seq
"""

