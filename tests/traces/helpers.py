"""Builders for small hand-made rollout traces used across the traces tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any

import duckdb

from evoharness.agent.events import Event
from evoharness.files import write_model
from evoharness.tasks.results import RolloutResult, rollout_id


def result(
    task: str, *, iteration: int = 0, attempt: int = 0, outcome: str = "pass",
    split: str = "train", commit: str = "c0", events: int = 3, run_id: str = "run",
    **fields: Any,
) -> RolloutResult:
    trace = [
        Event(seq=i, kind="tool_call" if i % 2 else "model_call", name="shell",
              content=f"{task} step {i}", data={"i": i}, tokens_in=10, tokens_out=2,
              duration_ms=5.0, ts=100.0 + i)
        for i in range(events)
    ]
    return RolloutResult(
        rollout_id=rollout_id(iteration, task, attempt), run_id=run_id, iteration=iteration,
        task_id=task, split=split, attempt=attempt, harness_commit=commit, outcome=outcome,
        events=trace, **fields,
    )


def write(folder: Path, results: list[RolloutResult]) -> list[Path]:
    return [write_model(folder / f"{r.rollout_id}.json", r) for r in results]


HEADERS, BLOCK = 3 * 4096, 256 * 1024  # DuckDB's file layout: 3 header blocks, then 256 KiB blocks


def damage_table_data(db: Path) -> None:
    """Overwrite a few bytes in every storage block but the first (which holds the catalogue, so
    the file still opens): table data is damaged the way a torn write would damage it."""
    size = db.stat().st_size
    with open(db, "r+b") as handle:
        for offset in range(HEADERS + BLOCK, size, BLOCK):
            handle.seek(offset + 1000)
            handle.write(b"\xff" * 64)


def tables(db: Path) -> dict[str, list[tuple]]:
    """Every table of a store, its rows in a stable order (to compare two stores)."""
    from evoharness.traces.schema import TABLES

    with duckdb.connect(str(db), read_only=True) as con:
        return {t: con.execute(f"SELECT * FROM {t} ORDER BY ALL").fetchall() for t in TABLES}
