"""Every query against expectations computed by hand from a small, hand-built run."""
from __future__ import annotations

import pytest

from evoharness.agent.events import Event
from evoharness.traces import queries
from evoharness.tasks.results import rollout_id
from evoharness.traces.store import TraceStore

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


# A change's trial in iteration 1: (arm, commit, task, outcomes by attempt). Its rollouts count
# for the iteration's cost, never for its evaluation.
TRIAL = [("base", "c1", "a", ["fail", "infra_error"]), ("change", "t1", "a", ["pass"])]


def planned():
    for iteration, commit, task, split, outcomes in PLAN:
        for attempt, outcome in enumerate(outcomes):
            yield _result(task, iteration, attempt, outcome, split, commit)
    for arm, commit, task, outcomes in TRIAL:
        for attempt, outcome in enumerate(outcomes):
            plain = _result(task, 1, attempt, outcome, "train", commit)
            yield plain.model_copy(update={
                "rollout_id": rollout_id(1, task, attempt, "x", arm), "trial_change": "x",
                "trial_arm": arm})


def _result(task, iteration, attempt, outcome, split, commit):
    return result(task, iteration=iteration, attempt=attempt, outcome=outcome, split=split,
                  commit=commit, tokens_in=100 * attempt + 10, tokens_out=5, duration_s=2.0,
                  steps=attempt + 1, started_at=1000.0 + 10 * attempt, exit_reason=EXIT[outcome])


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
        "wall_time_s": 22.0, "trial_rollouts": 0}
    # the trial's 3 rollouts add to the cost (tokens 10 + 110 + 10, 2 s each), not to the rates
    assert second.model_dump() == {
        "iteration": 1, "rollouts": 7, "infra_errors": 0, "pass_rate_train": 0.8,
        "pass_rate_heldout": 0.0, "tokens_in": 500, "tokens_out": 50, "rollout_time_s": 20.0,
        "wall_time_s": 12.0, "trial_rollouts": 3}


def test_evaluated_counts_pool_train_evaluations_by_commit(con):
    # scored train rollouts of evaluations only: no held-out h, no infra-only z, no trial rollout
    assert queries.evaluated_counts(con, "run") == [
        ("c0", "a", 2, 3), ("c0", "b", 0, 1), ("c1", "a", 2, 2), ("c1", "b", 1, 2),
        ("c1", "c", 1, 1)]


def test_trial_rollouts_in_attempt_order_with_infra_errors(con):
    assert queries.trial_rollouts(con, "run", 1) == [
        ("x", "base", "a", 0, "fail"), ("x", "base", "a", 1, "infra_error"),
        ("x", "change", "a", 0, "pass")]
    assert queries.trial_rollouts(con, "run", 0) == []


def test_run_spend_counts_the_time_rollouts_ran_once_however_they_overlap(con, tmp_path):
    # the module's run: attempts 0, 1 and 2 start at 1000, 1010 and 1020 s and take 2 s each
    assert queries.run_spend(con, "run").busy_seconds == pytest.approx(6.0)
    # (start, seconds): two workers' overlapping rollouts over 0-12 s, a stop of an hour, one more
    spans = [(0.0, 10.0), (5.0, 2.0), (8.0, 4.0), (3600.0, 5.0)]
    write(tmp_path / "rollouts", [result(f"t{n}", attempt=n, started_at=start, duration_s=took)
                                  for n, (start, took) in enumerate(spans)])
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.ingest_dir(tmp_path / "rollouts")
        assert queries.run_spend(store.con, "run").busy_seconds == pytest.approx(12.0 + 5.0)
