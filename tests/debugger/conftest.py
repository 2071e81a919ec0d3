"""A temporary trace store with hand-built rollouts and events, for the debugger tests."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from tasks.results import rollout_id
from traces.schema import DDL

RUN = "run1"


class Traces:
    """Inserts rows the way traces/ would store them (schema from traces/schema.py)."""

    def __init__(self, path: Path) -> None:
        self.con = duckdb.connect(str(path))
        self.con.execute(DDL)

    def rollout(
        self, task: str, attempt: int, outcome: str, *, iteration: int = 1, split: str = "train",
        events: list[tuple[str, str, str, dict]] = (), verifier_tail: str = "",
        exit_reason: str = "done", tokens: int = 100, duration: float = 2.0,
    ) -> str:
        rid = rollout_id(iteration, task, attempt)
        self.con.execute(
            "INSERT INTO rollouts VALUES (?, ?, ?, ?, ?, ?, 'abc123', 'scripted', ?, ?, ?, ?, ?,"
            " ?, ?, ?, 0, '')",
            [rid, RUN, iteration, task, split, attempt, outcome, float(outcome == "pass"),
             tokens // 2, tokens - tokens // 2, len(events), duration, exit_reason, verifier_tail],
        )
        for seq, (kind, name, content, data) in enumerate(events):
            self.con.execute(
                "INSERT INTO events VALUES (?, ?, ?, ?, ?, ?, 1, 1, 5.0, 0)",
                [rid, seq, kind, name, content, json.dumps(data)],
            )
        return rid


def shell(command: str) -> tuple[str, str, str, dict]:
    return ("tool_call", "shell", "", {"arguments": {"command": command}})


def output(text: str) -> tuple[str, str, str, dict]:
    return ("tool_result", "shell", text, {"exit_code": 0})


@pytest.fixture
def traces(tmp_path: Path) -> Traces:
    store = Traces(tmp_path / "traces.duckdb")
    yield store
    store.con.close()
