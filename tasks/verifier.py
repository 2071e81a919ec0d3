"""The verifier: after the agent is done, run the task's tests/test.sh over the same /app in a
fresh sandbox command and read the reward file. Only the reward file decides; test output is kept
for evidence, never parsed."""
from __future__ import annotations

import json
import shutil
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from tasks.sandbox import Mount
from tasks.sandboxes import Sandbox
from tasks.task import Task

TAIL_LINES = 40


class VerifierResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    reward: float
    passed: bool
    output_tail: str  # last lines of test.sh's output (failing assertions), plus why if no reward
    exit_reason: str = "exited"
    duration_s: float = 0.0


def read_reward(logs: Path) -> tuple[float | None, str]:
    """The reward from reward.txt (a float) or reward.json ({"reward": x, ...}); None if absent
    or unreadable, with the reason."""
    text_file, json_file = logs / "reward.txt", logs / "reward.json"
    try:
        if text_file.exists():
            return float(text_file.read_text().strip()), ""
        if json_file.exists():
            data = json.loads(json_file.read_text())
            value = data["reward"] if isinstance(data, dict) else data
            return float(value), ""
    except (ValueError, KeyError, TypeError) as error:
        return None, f"unreadable reward file: {error!r}"
    return None, "no reward file written to /logs/verifier"


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def verify(task: Task, sandbox: Sandbox) -> VerifierResult:
    """Run tests/test.sh (tests at /tests, writable /logs/verifier) within the verifier timeout.
    A timeout or a missing reward file is a fail with reward 0. Nothing the agent started can
    interfere: each sandbox command's processes are reaped before it returns."""
    logs = sandbox.writable_dir("logs")
    try:
        mounts = [Mount(source=task.tests_dir, dest="/tests"),
                  Mount(source=logs, dest="/logs/verifier", writable=True)]
        env = "".join(f"export {k}={json.dumps(v)}; " for k, v in task.config.verifier.env.items())
        run = sandbox.exec(f"{env}bash /tests/test.sh", mounts=mounts,
                           timeout=task.config.verifier.timeout_sec)
        reward, problem = read_reward(logs)
    finally:
        shutil.rmtree(logs, ignore_errors=True)
    if run.timed_out:
        reward, problem = None, f"verifier timed out after {task.config.verifier.timeout_sec}s"
    tail = _tail(run.output) + (f"\n[{problem}]" if problem else "")
    value = reward if reward is not None else 0.0
    return VerifierResult(reward=value, passed=value >= task.config.verifier.pass_reward,
                          output_tail=tail, exit_reason=run.exit_reason,
                          duration_s=run.duration_ms / 1000)
