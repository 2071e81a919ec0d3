"""The verifier: the reward file alone decides; tests are mounted only for verification."""
from __future__ import annotations

import shutil

import pytest

from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_task
from evoharness.tasks.verifier import read_reward, verify

from .conftest import FIXTURES, needs_bwrap


def test_read_reward_formats(tmp_path):
    assert read_reward(tmp_path) == (None, "no reward file written to /logs/verifier")
    (tmp_path / "reward.json").write_text('{"reward": 0.5, "tests": 3}')
    assert read_reward(tmp_path) == (0.5, "")
    (tmp_path / "reward.txt").write_text(" 1\n")
    assert read_reward(tmp_path) == (1.0, "")
    (tmp_path / "reward.txt").write_text("passed")
    value, problem = read_reward(tmp_path)
    assert value is None and "unreadable" in problem


@needs_bwrap
def test_hello_world_untouched_fails_with_assertion_tail(sandbox, hello_task):
    result = verify(hello_task, sandbox)
    assert (result.reward, result.passed) == (0.0, False)
    assert "does not exist" in result.output_tail


@needs_bwrap
def test_hello_world_solved_passes(sandbox, hello_task):
    sandbox.exec('echo "Hello, world!" > hello.txt', timeout=20)
    result = verify(hello_task, sandbox)
    assert (result.reward, result.passed) == (1.0, True), result.output_tail


@needs_bwrap
def test_reward_json_with_metrics(sum_task):
    box = BwrapSandbox.for_task(sum_task)
    try:
        box.exec("echo 42 > sum.txt", timeout=20)
        assert verify(sum_task, box).passed
    finally:
        box.close()


def _task_with_test(tmp_path, script: str, timeout: float = 60.0):
    root = shutil.copytree(FIXTURES / "hello-world", tmp_path / "t")
    (root / "tests" / "test.sh").write_text(script)
    toml = (root / "task.toml").read_text().replace("timeout_sec = 60.0", f"timeout_sec = {timeout}")
    (root / "task.toml").write_text(toml)
    return load_task(root)


@needs_bwrap
@pytest.mark.parametrize("script, timeout, reason", [
    # Must not time out: a generous limit, so a loaded machine cannot turn it into a timeout.
    ("echo all good", 120.0, "no reward file"),
    # Must time out: the script waits far past its short limit.
    ("sleep 600; echo 1 > /logs/verifier/reward.txt", 1.0, "timed out"),
])
def test_no_reward_or_timeout_is_a_fail(tmp_path, script, timeout, reason):
    task = _task_with_test(tmp_path, script, timeout=timeout)
    box = BwrapSandbox.for_task(task)
    try:
        result = verify(task, box)
    finally:
        box.close()
    assert (result.reward, result.passed) == (0.0, False)
    assert reason in result.output_tail


@needs_bwrap
def test_verifier_cannot_be_fooled_by_agent_written_logs(sandbox, hello_task):
    sandbox.exec("mkdir -p logs/verifier && echo 1 > logs/verifier/reward.txt", timeout=20)
    assert not verify(hello_task, sandbox).passed
