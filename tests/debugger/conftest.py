"""A temporary trace store with hand-built rollouts and events, for the debugger tests."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from evoharness.tasks.results import rollout_id
from evoharness.traces.schema import DDL

RUN = "run1"
TIMINGS = ("tokens_read", "tokens_cached", "prefill_ms", "decode_ms")  # events' timing columns


class Traces:
    """Inserts rows the way traces/ would store them (schema from traces/schema.py)."""

    def __init__(self, path: Path) -> None:
        self.con = duckdb.connect(str(path))
        self.con.execute(DDL)

    def rollout(
        self, task: str, attempt: int, outcome: str, *, iteration: int = 1, split: str = "train",
        events: list[tuple[str, str, str, dict]] = (), verifier_tail: str = "",
        exit_reason: str = "done", tokens: int = 100, duration: float = 2.0,
        trial_change: str = "", trial_arm: str = "",
    ) -> str:
        rid = rollout_id(iteration, task, attempt, trial_change, trial_arm)
        self.con.execute(
            "INSERT INTO rollouts VALUES (?, ?, ?, ?, ?, ?, 'abc123', 'scripted', ?, ?, ?, ?, ?,"
            " ?, ?, ?, 0, '', ?, ?, 0, 0, NULL, NULL, NULL, NULL, 0, NULL)",
            [rid, RUN, iteration, task, split, attempt, outcome, float(outcome == "pass"),
             tokens // 2, tokens - tokens // 2, len(events), duration, exit_reason, verifier_tail,
             trial_change, trial_arm],
        )
        for seq, (kind, name, content, data, *timed) in enumerate(events):
            timings = {**dict.fromkeys(TIMINGS), "stalled": False, "stall_ms": None,
                       **(timed[0] if timed else {})}
            self.con.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, 1, 1, ?, 0, ?, ?, ?, ?, ?, ?)",
                [rid, seq, kind, name, content, json.dumps(data), timings.pop("duration_ms", 5.0),
                 *[timings[column] for column in (*TIMINGS, "stalled", "stall_ms")]],
            )
        return rid


def shell(command: str) -> tuple[str, str, str, dict]:
    return ("tool_call", "shell", "", {"arguments": {"command": command}})


def output(text: str) -> tuple[str, str, str, dict]:
    return ("tool_result", "shell", text, {"exit_code": 0})


def call(**timings: object) -> tuple[str, str, str, dict, dict]:
    """A model call with its server's timings (events' timing columns, duration_ms)."""
    return ("model_call", "m", "{}", {}, timings)


@pytest.fixture
def traces(tmp_path: Path) -> Traces:
    store = Traces(tmp_path / "traces.duckdb")
    yield store
    store.con.close()
