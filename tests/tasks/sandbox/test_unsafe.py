"""The no-sandbox fallback: refused unless explicitly asked for; then Harbor tasks still run."""
from __future__ import annotations

import pytest

from evoharness.errors import EvoError
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.sandbox.bwrap import BwrapSandbox, Mount
from evoharness.tasks.sandbox.unsafe import UnsafeHostSandbox, require_sandbox
from evoharness.tasks.verifier import verify


def test_refuses_without_bwrap_unless_unsafe(monkeypatch, tmp_path, capsys):
    monkeypatch.setenv("PATH", str(tmp_path))  # a PATH on which no bwrap can be found
    with pytest.raises(EvoError, match="--unsafe-no-sandbox"):
        require_sandbox(unsafe=False)
    assert require_sandbox(unsafe=True) == UnsafeHostSandbox.for_task
    assert "WARNING" in capsys.readouterr().err


def test_prefers_bwrap_when_installed():
    assert require_sandbox(unsafe=True) == BwrapSandbox.for_task


def test_rewrites_only_sandbox_paths(tmp_path):
    box = UnsafeHostSandbox(tmp_path)
    text = box.rewrite('cat /app/x "/tests" /logs/verifier/r.txt /usr/apple /tmp/app ./app')
    assert text == (f'cat {box.root}/app/x "{box.root}/tests" {box.root}/logs/verifier/r.txt '
                    "/usr/apple /tmp/app ./app")
    box.close()


def test_hello_world_oracle_and_nothing_on_the_host(hello_task):
    for command, passed in [("bash /solution/solve.sh", True), ("true", False)]:
        box = UnsafeHostSandbox.for_task(hello_task)
        try:
            box.exec(command, timeout=20, mounts=[Mount(source=hello_task.solution_dir,
                                                        dest="/solution")])
            assert verify(hello_task, box).passed is passed
        finally:
            box.close()


def test_the_agents_shell_tool_reaches_app_on_the_host(seed_harness, hello_task, tmp_path):
    """A rollout on the host: the shell tool's command names /app as in the sandbox."""
    solve = [json_action("shell", command='echo "Hello, world!" > /app/hello.txt'),
             json_action("done", summary="wrote /app/hello.txt")]
    [path] = run_rollouts(seed_harness, "c1", [(hello_task, "train")], ScriptedModel(solve),
                          run_id="r", iteration=0, out_dir=tmp_path,
                          sandbox_factory=UnsafeHostSandbox.for_task)
    result = RolloutResult.model_validate_json(path.read_text())
    assert result.outcome == Outcome.PASS, (result.events, result.verifier_tail)
