"""The rollout runner with the scripted model on the fixture tasks: every outcome kind, written
atomically, k attempts over N workers, skipping stored rollouts."""
from __future__ import annotations

import json
import time

import pytest

from agent.model import ModelError
from tasks.results import Outcome, RolloutResult
from tasks.runner import plan_rollouts, run_rollouts
from agent.clients.scripted import ScriptedModel, json_action

from .conftest import needs_bwrap

pytestmark = needs_bwrap

SOLVE = [json_action("shell", command='echo "Hello, world!" > hello.txt'),
         json_action("done", summary="wrote hello.txt")]


def _run(harness, task, model, tmp_path, **kwargs):
    defaults = dict(run_id="r1", iteration=0, out_dir=tmp_path / "out")
    paths = run_rollouts(harness, "abc123", [(task, "train")], model, **{**defaults, **kwargs})
    return [RolloutResult.model_validate_json(p.read_text()) for p in paths]


def test_pass_writes_a_complete_result(seed_harness, hello_task, tmp_path):
    [result] = _run(seed_harness, hello_task, ScriptedModel(SOLVE), tmp_path)
    assert result.outcome == Outcome.PASS and result.reward == 1.0
    assert (result.rollout_id, result.harness_commit, result.exit_reason) == (
        "it000-hello-world-a00", "abc123", "done")
    assert result.steps >= 2 and result.tokens_in > 0 and result.duration_s > 0
    assert any(e.kind == "tool_result" for e in result.events)
    assert [p.name for p in (tmp_path / "out").iterdir()] == ["it000-hello-world-a00.json"]


def test_doing_nothing_fails_with_verifier_tail(seed_harness, hello_task, tmp_path):
    [result] = _run(seed_harness, hello_task,
                    ScriptedModel([json_action("done", summary="nothing")]), tmp_path)
    assert result.outcome == Outcome.FAIL and "does not exist" in result.verifier_tail


def test_model_unavailable_is_infra_error(seed_harness, hello_task, tmp_path):
    down = ModelError("connection refused", kind="unavailable")
    [result] = _run(seed_harness, hello_task, ScriptedModel([down] * 10), tmp_path)
    assert (result.outcome, result.exit_reason) == (Outcome.INFRA_ERROR, "model_unavailable")


def test_exception_in_a_rollout_becomes_infra_error(seed_harness, hello_task, tmp_path):
    def broken(messages):
        raise RuntimeError("boom")

    [result] = _run(seed_harness, hello_task, ScriptedModel([broken]), tmp_path)
    assert result.outcome == Outcome.INFRA_ERROR
    assert result.exit_reason == "exception: RuntimeError: boom"


def test_hung_model_is_a_timeout(seed_harness, hello_task, tmp_path):
    def hang(messages):
        time.sleep(3)
        return json_action("done", summary="too late")

    [result] = _run(seed_harness, hello_task, ScriptedModel([hang]), tmp_path, rollout_timeout=0.5)
    assert (result.outcome, result.exit_reason) == (Outcome.TIMEOUT, "rollout_timeout")


def test_k_attempts_over_workers_and_skip_existing(seed_harness, hello_task, sum_task, tmp_path):
    tasks = [(hello_task, "train"), (sum_task, "heldout")]
    seen = []
    paths = run_rollouts(seed_harness, "c1", tasks, lambda: ScriptedModel(SOLVE), run_id="r",
                         iteration=2, out_dir=tmp_path, attempts=2, workers=2,
                         progress=seen.append)
    results = {p.stem: json.loads(p.read_text()) for p in paths}
    assert sorted(results) == ["it002-hello-world-a00", "it002-hello-world-a01",
                               "it002-sum-numbers-a00", "it002-sum-numbers-a01"]
    assert {r["task_id"]: r["outcome"] for r in results.values()} == {
        "hello-world": "pass", "sum-numbers": "fail"}
    assert {r["split"] for r in results.values() if r["task_id"] == "sum-numbers"} == {"heldout"}
    assert len(seen) == 4
    again = run_rollouts(seed_harness, "c1", tasks, lambda: ScriptedModel(SOLVE), run_id="r",
                         iteration=2, out_dir=tmp_path, attempts=3, workers=2,
                         skip=set(results))
    assert sorted(p.stem for p in again) == ["it002-hello-world-a02", "it002-sum-numbers-a02"]
    assert not list(tmp_path.glob(".*.tmp"))


def test_plan_interleaves_attempts(hello_task, sum_task):
    plan = plan_rollouts([(hello_task, "train"), (sum_task, "heldout")], 2)
    assert [(t.id, a) for t, _, a in plan] == [("hello-world", 0), ("sum-numbers", 0),
                                                ("hello-world", 1), ("sum-numbers", 1)]


def test_sandbox_failure_is_infra_error(seed_harness, hello_task, tmp_path):
    from tasks.sandbox import BwrapSandbox

    def broken_sandbox(task, *, harness_dir):
        return BwrapSandbox.for_task(task, harness_dir=harness_dir / "missing")

    [result] = _run(seed_harness, hello_task, ScriptedModel(SOLVE), tmp_path,
                    sandbox_factory=broken_sandbox)
    assert result.outcome == Outcome.INFRA_ERROR
    assert result.exit_reason.startswith("sandbox_error: bwrap:")


@pytest.mark.slow
def test_embedded_model_rollouts_record_an_outcome(seed_harness, hello_task, sum_task, tmp_path):
    from agent.clients import make_model

    model = make_model("embedded")
    # Three steps end each rollout by its step budget, not by a clock: two rollouts of the 1.5B on
    # a loaded 2-core machine stay far inside pytest's timeout, and the watchdog stays a safety net.
    settings = seed_harness.spec.settings.model_copy(update={"max_steps": 3})
    harness = seed_harness.model_copy(
        update={"spec": seed_harness.spec.model_copy(update={"settings": settings})})
    paths = run_rollouts(harness, "c1", [(hello_task, "train"), (sum_task, "heldout")],
                         model, run_id="r", iteration=0, out_dir=tmp_path, rollout_timeout=300)
    results = [RolloutResult.model_validate_json(p.read_text()) for p in paths]
    assert [r.task_id for r in results] == ["hello-world", "sum-numbers"]
    # Pass or fail is the model's business; a recorded, non-infra outcome is what is asserted.
    assert all(r.outcome in (Outcome.PASS, Outcome.FAIL, Outcome.TIMEOUT) for r in results), [
        (r.outcome, r.exit_reason) for r in results]
    assert all(r.model for r in results)
    assert all(r.steps <= 3 for r in results)
