"""Synthetic trace stores of any size, generated inside DuckDB: the benchmark's AHE-sized
iteration and the bound tests' large suites. Never used on real runs.

Task t has a fixed pattern: t % 4 == 0 always fails, 1 passes one attempt of two, 2 fails in
iteration 1 and passes later, 3 always passes. Failing rollouts diverge at their middle step.
"""
from __future__ import annotations

import duckdb

from evoharness.traces.schema import DDL

OUTCOME = """CASE t % 4 WHEN 0 THEN 'fail' WHEN 1 THEN (CASE WHEN a = 1 THEN 'pass' ELSE 'fail' END)
    WHEN 2 THEN (CASE WHEN it = 1 THEN 'fail' ELSE 'pass' END) ELSE 'pass' END"""

ROLLOUTS = f"""
INSERT INTO rollouts (rollout_id, run_id, iteration, task_id, split, attempt, harness_commit,
                      model, outcome, reward, tokens_in, tokens_out, steps, duration_s,
                      exit_reason, verifier_tail, started_at, node, trial_change, trial_arm,
                      model_calls, model_s)
SELECT printf('it%03d-task-%04d-a%02d', it, t, a), $run, it, printf('task-%04d', t), 'train', a,
       'c' || it, 'synthetic', o, (o = 'pass')::INT, 1000 * $steps, 100 * $steps, $steps,
       $steps * 0.5, CASE WHEN o = 'pass' THEN 'done' ELSE 'max_steps' END,
       CASE WHEN o = 'pass' THEN '1 passed'
            ELSE '>       assert f(' || t || ') == 1' || chr(10) || 'E       assert 0 == 1' || chr(10)
                 || 'FAILED tests/test_outputs.py::test_' || (t % 7) END,
       0, 'synthetic', '', '', $steps // 3, $steps * 0.3
FROM (SELECT it, t, a, {OUTCOME} AS o
      FROM range(1, $iterations + 1) i(it), range($tasks) tt(t), range(1, $k + 1) aa(a))
"""

# Every third event is a model call, a tool call or its (30-line) output; every 50th an error.
EVENTS = """
INSERT INTO events (rollout_id, seq, kind, name, content, data, tokens_in, tokens_out,
                    duration_ms, ts)
SELECT r.rollout_id, s,
       CASE WHEN s % 50 = 49 THEN 'error' ELSE ['model_call', 'tool_call', 'tool_result'][s % 3 + 1] END,
       CASE WHEN s % 50 = 49 THEN 'ToolTimeout' WHEN s % 3 = 0 THEN 'synthetic' ELSE 'shell' END,
       CASE WHEN s % 50 = 49 THEN 'command timed out after 30 s'
            WHEN s % 3 = 2 THEN repeat('output line of step ' || s || ' with some text' || chr(10), 30)
            ELSE 'thinking about step ' || s END,
       CASE WHEN s % 3 = 1 THEN json_object('arguments', json_object('command', 'cmd ' || s
            || CASE WHEN r.outcome <> 'pass' AND s > r.steps / 2 THEN ' --wrong' ELSE '' END))
            ELSE '{}'::JSON END,
       100, 10, 5.0, s
FROM rollouts r, range(r.steps) ss(s)
WHERE r.run_id = $run
"""


def synthesise(
    con: duckdb.DuckDBPyConnection, run_id: str, *, tasks: int, k: int = 2, steps: int = 300,
    iterations: int = 2,
) -> None:
    """Fill `con` (schema created if missing) with `iterations` iterations of tasks × k rollouts
    of `steps` events each."""
    con.execute(DDL)
    con.execute(ROLLOUTS, {"run": run_id, "steps": steps, "iterations": iterations,
                           "tasks": tasks, "k": k})
    con.execute(EVENTS, {"run": run_id})
