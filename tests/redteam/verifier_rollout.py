"""Helpers for the sandbox and verifier attacks: one rollout through the real runner (seed harness,
a scripted agent running shell commands, the real bubblewrap sandbox and verifier), and small
Harbor tasks built for one attack."""
from __future__ import annotations

import shutil
import sys
from pathlib import Path

from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import Task, load_task
from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tasks" / "suite"
FIXTURES = ROOT / "tests" / "fixtures" / "tasks"


def attack(tmp_path: Path, task: Task, *commands: str, factory=BwrapSandbox.for_task,
           harness: Path = SEED_DIR) -> tuple[RolloutResult, list[str]]:
    """One rollout whose agent runs `commands` with the shell tool, then says done. Returns the
    stored result (read back from its file, as traces/ will) and each command's tool output."""
    def model() -> ScriptedModel:  # a fresh script for each try of the rollout
        return ScriptedModel([json_action("shell", command=c) for c in commands]
                             + [json_action("done", summary="finished")])
    [path] = run_rollouts(load_harness(harness), "seed", [(task, "train")], model, run_id="red",
                          iteration=0, out_dir=tmp_path / "rollouts", sandbox_factory=factory)
    result = RolloutResult.model_validate_json(path.read_text())
    outputs = [str(e.content) for e in result.events if e.kind == "tool_result"]
    assert len(outputs) >= len(commands), "every command's result is recorded"
    return result, outputs[:len(commands)]


def suite_task(name: str) -> Task:
    return load_task(SUITE / name)


def user_task(tmp_path: Path, *, test_sh: str, toml: str = "", name: str = "user-task",
              files: dict[str, str] | None = None, replace: dict[str, str] | None = None) -> Task:
    """A Harbor task like a user's: hello-world's files with this tests/test.sh, task.toml with
    `replace` done and `toml` appended, and extra files (relative to the task directory)."""
    root = Path(shutil.copytree(FIXTURES / "hello-world", tmp_path / name))
    (root / "tests" / "test.sh").write_text(test_sh)
    text = (root / "task.toml").read_text()
    for old, new in (replace or {}).items():
        assert old in text, old
        text = text.replace(old, new)
    (root / "task.toml").write_text(text + "\n" + toml)
    for rel, text in (files or {}).items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return load_task(root)


def contained(result: RolloutResult) -> None:
    """The attack did not buy a pass: an ordinary failed rollout with reward 0. Each attack test
    also runs the attack with its defence off (succeeded), so a pass here means the defence held,
    not that the attack never worked."""
    assert (result.outcome.value, result.reward) == ("fail", 0.0), (
        result.outcome, result.reward, result.verifier_tail[-800:])


def succeeded(result: RolloutResult) -> None:
    """The control: with the defence off, the same attack buys a pass it did not earn."""
    assert (result.outcome.value, result.reward) == ("pass", 1.0), (
        result.outcome, result.reward, result.verifier_tail[-800:])


PLAIN_TOOLS = ("bash", "sh", "mkdir", "ls", "tr", "sleep", "setpriv", "git", "cat", "chmod")


def without_nested_sandbox(task: Task, tmp_path: Path) -> Task:
    """A copy of a built-in task whose judge finds no bwrap (a PATH of a few tools and the venv's
    Python), as where user namespaces are refused: it runs the agent's code as plain children,
    the judge's defence against code that forges the reward or reads the tests switched off."""
    root = Path(shutil.copytree(task.root, tmp_path / f"{task.id}-plain"))
    tools = root / "tests" / "bin"
    tools.mkdir()
    for tool in PLAIN_TOOLS:
        (tools / tool).symlink_to(shutil.which(tool))
    (root / "task.toml").write_text((root / "task.toml").read_text() + (
        f'\n[verifier.env]\nPATH = "/tests/bin:{Path(sys.executable).parent}"\n'))
    return load_task(root)
