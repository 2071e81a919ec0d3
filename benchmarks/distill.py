"""Benchmark: distil one AHE-sized iteration (89 tasks × 2 rollouts × 300 steps ≈ 53k events,
plus the previous iteration for deltas) from a temporary DuckDB file. Target: ≤ 10 s.

Run: .venv/bin/python benchmarks/distill.py
"""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import duckdb

from evoharness.debugger.distill import distill
from evoharness.debugger.synthetic import synthesise

TASKS, K, STEPS = 89, 2, 300


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        con = duckdb.connect(str(Path(tmp) / "traces.duckdb"))
        synthesise(con, "bench", tasks=TASKS, k=K, steps=STEPS, iterations=2)
        events = con.execute(
            "SELECT count(*) FROM events JOIN rollouts USING (rollout_id) WHERE iteration = 2"
        ).fetchone()[0]
        start = time.perf_counter()
        index = distill(con, "bench", 2, tmp, hidden_tasks={"task-0088"})
        seconds = time.perf_counter() - start
        files = 1 + len(index.tasks) + len(index.rollouts)
        print(f"events: {events} events")
        print(f"evidence_files: {files} files")
        print(f"distill_seconds: {seconds:.2f} s")
        print(f"overview_tokens: {index.overview_chars // 4} tokens")
        con.close()


if __name__ == "__main__":
    main()
