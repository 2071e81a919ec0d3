"""Builders for small hand-made rollout traces used across the traces tests."""
from __future__ import annotations

from pathlib import Path
from typing import Any

from agent.events import Event
from evoharness.files import write_model
from tasks.results import RolloutResult, rollout_id


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
