"""Benchmark: synthesise rollout trace files (default 2,000 rollouts x 500 events = 1M events),
ingest them into a fresh trace store, print `metric: value unit` lines (target >= 100k events/s).
events_per_cpu_s counts the process's CPU time, not the wall clock: on a shared machine the wall
figure follows the other work (122-153k events/s at a load of 1, 30-57k at 5-7, the same code),
the CPU figure much less (95-105k across both)."""
from __future__ import annotations

import argparse
import random
import tempfile
import time
from pathlib import Path

from evoharness.agent.events import Event
from evoharness.files import write_model
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.traces.store import TraceStore

KINDS = ("model_call", "tool_call", "tool_result", "note")
WORDS = "the file test error passed failed import def return value python shell ls cat grep".split()


def content_pool(rng: random.Random, size: int = 4096) -> list[str]:
    """Varied texts of 20-600 characters, so the database size is not flattered by repetition."""
    return [" ".join(rng.choices(WORDS, k=rng.randint(4, 100))) for _ in range(size)]


def synthesise(folder: Path, rollouts: int, events: int, seed: int = 0) -> None:
    rng = random.Random(seed)
    pool = content_pool(rng)
    for index in range(rollouts):
        trace = [
            Event(seq=seq, kind=KINDS[seq % 4], name="shell", content=rng.choice(pool),
                  data={"command": f"pytest -k t{seq}", "exit_code": seq % 3},
                  tokens_in=rng.randint(100, 4000), tokens_out=rng.randint(5, 300),
                  duration_ms=rng.random() * 1000, ts=1.7e9 + index + seq / 1000)
            for seq in range(events)
        ]
        result = RolloutResult(
            rollout_id=f"it{index // 200:03d}-task{index % 50:03d}-a{index % 4:02d}-{index}",
            run_id="bench", iteration=index // 200, task_id=f"task{index % 50:03d}",
            split="train" if index % 5 else "heldout", attempt=index % 4, harness_commit="c0ffee",
            outcome=Outcome.PASS if rng.random() < 0.6 else Outcome.FAIL, reward=1.0,
            tokens_in=sum(e.tokens_in for e in trace), tokens_out=sum(e.tokens_out for e in trace),
            steps=events // 2, duration_s=30.0, exit_reason="done", events=trace,
        )
        write_model(folder / f"{result.rollout_id}.json", result)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rollouts", type=int, default=2000)
    parser.add_argument("--events", type=int, default=500, help="events per rollout")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        folder, db = Path(tmp) / "rollouts", Path(tmp) / "traces.duckdb"
        folder.mkdir()
        start = time.perf_counter()
        synthesise(folder, args.rollouts, args.events)
        write_s = time.perf_counter() - start
        start, cpu_start = time.perf_counter(), time.process_time()
        with TraceStore(db) as store:
            report = store.ingest_dir(folder)
            store.con.execute("CHECKPOINT")  # the WAL folded into the file, so its size is real
        ingest_s, cpu_s = time.perf_counter() - start, time.process_time() - cpu_start
        total = args.rollouts * args.events
        assert report.events == total and report.ingested == args.rollouts, report
        print(f"events: {total} events")
        print(f"file_write_s: {write_s:.2f} s")
        print(f"ingest_s: {ingest_s:.2f} s")
        print(f"events_per_s: {total / ingest_s:.0f} events/s")
        print(f"events_per_cpu_s: {total / cpu_s:.0f} events/CPU-s")
        print(f"db_bytes_per_million_events: {db.stat().st_size * 1_000_000 / total:.0f} bytes")


if __name__ == "__main__":
    main()
