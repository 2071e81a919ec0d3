"""Benchmark (not a test): sandbox start latency and rollout throughput with the scripted model.

Prints `metric: value unit` lines. Run: .venv/bin/python benchmarks/sandbox.py"""
from __future__ import annotations

import statistics
import tempfile
import time
from pathlib import Path

from agent.clients.scripted import ScriptedModel, json_action
from tasks.runner import run_rollouts
from tasks.sandbox import BwrapSandbox
from tasks.task import load_task
from workspace.repo import SEED_DIR
from workspace.validate import load_harness

ROOT = Path(__file__).resolve().parents[1]

STEPS = [json_action("shell", command="ls"),
         json_action("shell", command='echo "Hello, world!" > hello.txt'),
         json_action("shell", command="cat hello.txt"),
         json_action("done", summary="done")]


def start_latency(runs: int = 100) -> float:
    with tempfile.TemporaryDirectory() as app:
        box = BwrapSandbox(Path(app))
        times = []
        for _ in range(runs):
            result = box.exec("true", timeout=30)
            assert result.exit_code == 0, result.output
            times.append(result.duration_ms)
    return statistics.median(times)


def throughput(workers: int, rollouts: int = 8) -> float:
    harness = load_harness(SEED_DIR)
    task = load_task(ROOT / "tests" / "fixtures" / "tasks" / "hello-world")
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        run_rollouts(harness, "bench", [(task, "train")], lambda: ScriptedModel(list(STEPS)),
                     run_id="bench", iteration=0, out_dir=Path(out), attempts=rollouts,
                     workers=workers)
        return rollouts / (time.monotonic() - start)


def main() -> None:
    print(f"sandbox_start_latency_median: {start_latency():.1f} ms")
    for workers in (1, 2, 4):
        print(f"rollout_throughput_workers_{workers}: {throughput(workers) * 60:.1f} rollouts/min")


if __name__ == "__main__":
    main()
