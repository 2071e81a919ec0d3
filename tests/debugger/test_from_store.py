"""distill() over traces as the real pipeline stores them: RolloutResult files → TraceStore."""
from __future__ import annotations

from pathlib import Path

from evoharness.agent.events import Event
from evoharness.debugger.distill import distill
from evoharness.files import write_model
from evoharness.tasks.results import Outcome, RolloutResult, rollout_id
from evoharness.traces.store import TraceStore


def result(task: str, attempt: int, outcome: Outcome, command: str, split: str = "train") -> RolloutResult:
    events = [
        Event(seq=0, kind="model_call", name="m", content='{"tool": "shell"}', tokens_in=50, tokens_out=5),
        Event(seq=1, kind="tool_call", name="shell", data={"arguments": {"command": command}, "note": None}),
        Event(seq=2, kind="tool_result", name="shell", content="ok", data={"exit_code": 0, "error": None}),
    ]
    return RolloutResult(
        rollout_id=rollout_id(1, task, attempt), run_id="r", iteration=1, task_id=task, split=split,
        attempt=attempt, harness_commit="c", outcome=outcome, reward=float(outcome == Outcome.PASS),
        steps=1, exit_reason="done", verifier_tail="E       assert 'x' == 'y'", events=events,
    )


def test_distill_ingested_traces(tmp_path: Path) -> None:
    traces = tmp_path / "traces"
    for r in [result("t", 1, Outcome.PASS, "make"), result("t", 2, Outcome.FAIL, "make clean"),
              result("held", 1, Outcome.FAIL, "x", split="heldout")]:
        write_model(traces / f"{r.rollout_id}.json", r)
    with TraceStore(tmp_path / "traces.duckdb") as store:
        store.ingest_dir(traces)
        index = distill(store.con, "r", 1, tmp_path, hidden_tasks={"held"})
    task = index.tasks["t"].read_text()
    assert 'passing [it001-t-a01](../rollouts/it001-t-a01.md) (seq 1): `shell {"command": "make"}`' in task
    assert "E       assert 'x' == 'y'" in task
    assert "pass@1 **50%** over 1 tasks" in index.overview.read_text()
    assert set(index.rollouts) == {"it001-t-a01", "it001-t-a02"}
