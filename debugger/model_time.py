"""Where an iteration's model time went, for the evidence overview: prefill against decode, the
prompt cache's hit rate, the calls that stalled, the replies cut as runaways, and the tool outputs
whose reading cost most (the prompt tokens the next model call had to read after each). From the servers' own timings, which
the events keep (agent/clients/timings.py); a server that reports none leaves only wall time.
"""
from __future__ import annotations

from typing import Any

import duckdb
from pydantic import BaseModel

from evoharness.debugger import queries as q
from evoharness.debugger.render import safe_name
from evoharness.traces.queries import cache_hit_rate

COSTLY_OUTPUTS = 5  # tool outputs listed

CALL_TOTALS = """
SELECT count(*) AS calls, coalesce(sum(e.duration_ms), 0) / 1000 AS model_s,
       sum(e.tokens_read) AS read, sum(e.tokens_cached) AS cached,
       sum(e.prefill_ms) / 1000 AS prefill_s, sum(e.decode_ms) / 1000 AS decode_s,
       sum(e.tokens_read) FILTER (WHERE e.prefill_ms > 0) AS timed_read,
       sum(e.prefill_ms) FILTER (WHERE e.prefill_ms > 0) / 1000 AS timed_prefill_s,
       sum(e.tokens_out) FILTER (WHERE e.decode_ms > 0) AS timed_generated,
       sum(e.decode_ms) FILTER (WHERE e.decode_ms > 0) / 1000 AS timed_decode_s,
       count(*) FILTER (WHERE e.stalled) AS stalled,
       count(DISTINCT e.rollout_id) FILTER (WHERE e.stalled) AS stalled_rollouts,
       sum(e.stall_ms) FILTER (WHERE e.stalled) / 1000 AS stall_s,
       count(*) FILTER (WHERE json_extract(e.data, '$.runaway') IS NOT NULL) AS runaways
FROM events e JOIN v USING (rollout_id) WHERE v.iteration = $it AND e.kind = 'model_call'
"""

# Each tool output, the tool call that produced it, and the next model call, which read it.
COSTLY = f""",
ev AS (SELECT e.* FROM events e JOIN v USING (rollout_id) WHERE v.iteration = $it),
outputs AS (SELECT rollout_id, seq, name, length(content) AS chars FROM ev
            WHERE kind = 'tool_result'),
calls AS (SELECT rollout_id, seq, tokens_read, prefill_ms FROM ev WHERE kind = 'model_call'),
tools AS (SELECT rollout_id, seq, json_extract(data, '$.arguments')::VARCHAR AS arguments
          FROM ev WHERE kind = 'tool_call')
SELECT o.rollout_id, o.seq, o.name, o.chars, c.tokens_read, c.prefill_ms, t.arguments
FROM outputs o
ASOF JOIN calls c ON o.rollout_id = c.rollout_id AND c.seq > o.seq
ASOF LEFT JOIN tools t ON o.rollout_id = t.rollout_id AND t.seq < o.seq
WHERE c.tokens_read IS NOT NULL
ORDER BY c.tokens_read DESC, o.rollout_id, o.seq LIMIT {COSTLY_OUTPUTS}
"""


class ModelTime(BaseModel):
    """One iteration's model calls summed; None where no server reported the figure."""

    calls: int
    model_s: float
    read: int | None
    cached: int | None
    prefill_s: float | None
    decode_s: float | None
    prefill_rate: float | None  # prompt tokens read per second of prefill
    decode_rate: float | None  # tokens generated per second of decode
    stalled: int
    stalled_rollouts: int
    stall_s: float | None  # what the stalled calls took beyond their server's best rates
    runaways: int  # replies stopped because they repeated themselves (agent/clients/runaway.py)
    costly: list[dict[str, Any]]

    @property
    def hit_rate(self) -> float | None:
        return cache_hit_rate(self.read, self.cached)


def model_time(con: duckdb.DuckDBPyConnection, scope: q.Scope) -> ModelTime:
    row = q.rows(con, CALL_TOTALS, scope)[0]
    costly = [dict(r, link=f"rollouts/{safe_name(r['rollout_id'])}.md")
              for r in q.rows(con, COSTLY, scope)]
    return ModelTime(
        calls=row["calls"], model_s=row["model_s"], read=row["read"], cached=row["cached"],
        prefill_s=row["prefill_s"], decode_s=row["decode_s"],
        prefill_rate=_rate(row["timed_read"], row["timed_prefill_s"]),
        decode_rate=_rate(row["timed_generated"], row["timed_decode_s"]),
        stalled=row["stalled"], stalled_rollouts=row["stalled_rollouts"],
        stall_s=row["stall_s"], runaways=row["runaways"], costly=costly)


def _rate(tokens: int | None, seconds: float | None) -> float | None:
    return tokens / seconds if tokens and seconds else None
