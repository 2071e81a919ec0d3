"""Every query against expectations computed by hand from a small, hand-built run."""
from __future__ import annotations

import pytest

from agent.events import Event
from traces import queries
from traces.store import TraceStore

from .helpers import result, write

EXIT = {"pass": "done", "fail": "max_steps", "infra_error": "model_unavailable"}

# (iteration, commit, task, split, outcomes by attempt)
PLAN = [
    (0, "c0", "a", "train", ["pass", "fail", "pass"]),
    (0, "c0", "b", "train", ["fail", "infra_error"]),
    (0, "c0", "h", "heldout", ["pass", "pass"]),
    (0, "c0", "z", "train", ["infra_error"]),
    (1, "c1", "a", "train", ["pass", "pass"]),
    (1, "c1", "b", "train", ["pass", "fail"]),
    (1, "c1", "h", "heldout", ["fail", "fail"]),
    (1, "c1", "c", "train", ["pass"]),
]


def planned():
    for iteration, commit, task, split, outcomes in PLAN:
        for attempt, outcome in enumerate(outcomes):
            yield result(task, iteration=iteration, attempt=attempt, outcome=outcome, split=split,
                         commit=commit, tokens_in=100 * attempt + 10, tokens_out=5, duration_s=2.0,
                         steps=attempt + 1, started_at=1000.0 + 10 * attempt,
                         exit_reason=EXIT[outcome])


def with_events(r, events):
    return r.model_copy(update={"events": events})


@pytest.fixture(scope="module")
def con(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("q")
    results = list(planned())
    tool_error = {"error": {"kind": "transient", "message": "timeout", "suggestion": "retry"}}
    results[1] = with_events(results[1], [  # a, attempt 1 (a fail): two tool errors
        Event(seq=0, kind="tool_result", name="shell", data=tool_error),
        Event(seq=1, kind="tool_result", name="shell", data=tool_error),
        Event(seq=2, kind="tool_result", name="shell", data={"exit_code": 1, "error": None}),
    ])
    results[4] = with_events(results[4], [Event(seq=0, kind="error", name="ModelError")])
    results[8] = with_events(results[8], [Event(seq=s, kind="note", content=str(s), ts=0)
                                          for s in (2, 0, 1)])  # stored out of order
    results.append(result("a", run_id="other", attempt=7, outcome="fail",
                           commit="c0"))  # never leaks
    write(tmp / "rollouts", results)
    with TraceStore(tmp / "t.duckdb") as store:
        store.ingest_dir(tmp / "rollouts")
        yield store.con


def test_pass_counts(con):
    assert queries.pass_counts(con, "run", 0) == {"a": (2, 3), "b": (0, 1), "h": (2, 2)}
    assert queries.pass_counts(con, "run", 0, split="train") == {"a": (2, 3), "b": (0, 1)}
    assert queries.pass_counts(con, "run", 1, split="heldout") == {"h": (0, 2)}
    assert queries.pass_counts(con, "run", 0)["a"].passes == 2


def test_iteration_totals(con):
    first, second = queries.iteration_totals(con, "run")
    assert first.model_dump() == {
        "iteration": 0, "rollouts": 8, "infra_errors": 2, "pass_rate_train": 0.5,
        "pass_rate_heldout": 1.0, "tokens_in": 580, "tokens_out": 40, "rollout_time_s": 16.0,
        "wall_time_s": 22.0}
    assert second.model_dump() == {
        "iteration": 1, "rollouts": 7, "infra_errors": 0, "pass_rate_train": 0.8,
        "pass_rate_heldout": 0.0, "tokens_in": 370, "tokens_out": 35, "rollout_time_s": 14.0,
        "wall_time_s": 12.0}


def test_evaluation_groups_split_attempts_by_k(con):
    groups = queries.evaluation_groups(con, "run", 2, 1)
    # a in iteration 0: attempts 0,1 are one group (1/2), attempt 2 a partial group (1/1)
    assert [g for g in groups if g[1] == "a"] == [("c0", "a", 1, 2), ("c0", "a", 1, 1),
                                                  ("c1", "a", 2, 2)]
    assert ("c0", "z", 0, 0) not in groups and all(g[1] != "z" for g in groups)  # infra only
    assert all(g[0] == "c0" for g in queries.evaluation_groups(con, "run", 2, 0))
