"""Fault tests drive the real `evoharness` CLI in a subprocess (exit codes and stderr as a user sees
them) against the tiny fixture suite, with the scripted model, or (for the Ollama client's own
faults) a loopback Ollama-protocol server, as the model."""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import yaml

from evoharness.agent.clients.scripted import json_action
from evoharness.evolve.ledger import RunPaths
from tests.fixtures.e2e_agents import EVOLVE_MARKER
from evoharness.traces.store import TraceStore

ROOT = Path(__file__).resolve().parents[2]
CLI = [str(Path(sys.executable).parent / "evoharness")]  # the console script beside the venv's python
FIXTURE_TASKS = ROOT / "tests" / "fixtures" / "tasks"
HELLO_SOLUTION = "echo 'Hello, world!' > hello.txt"
HELLO = "hello.txt"  # a phrase only the hello-world instruction contains


def evoharness(*args: str | Path, host: str | None = None,
               timeout: float = 120) -> subprocess.CompletedProcess[str]:
    """The CLI as a user runs it; OLLAMA_HOST points the `ollama:` model at the test server."""
    env = {k: v for k, v in os.environ.items() if k != "OLLAMA_HOST"}
    env["COLUMNS"] = "1000"  # rich wraps at the terminal width; keep paths on one line
    if host:
        env["OLLAMA_HOST"] = host
    return subprocess.run([*CLI, *map(str, args)], env=env, capture_output=True, text=True,
                          timeout=timeout, cwd=ROOT)


def solver(body: dict[str, Any]) -> dict[str, Any]:
    """A code agent that runs the fixture's known solution (when it has one) and then says done:
    its reply depends only on the conversation, so concurrent rollouts share one server."""
    acted = any(m["role"] == "assistant" for m in body.get("messages", []))
    command = HELLO_SOLUTION if HELLO in instruction_of(body) else None
    if command and not acted:
        return {"content": json_action("shell", command=command)}
    return {"content": json_action("done", summary="finished")}


def forever(reply: Callable[[dict[str, Any]], dict[str, Any]], n: int = 500) -> list:
    """A server script that answers every request with `reply`."""
    return [reply] * n


def instruction_of(body: dict[str, Any]) -> str:
    return next((m["content"] for m in body.get("messages", []) if m["role"] == "user"), "")


def solver_script(path: Path, *evolve_replies: dict[str, Any]) -> str:
    """The scripted model's `solver` (hello-world solved, sum-numbers not) and an evolve agent
    replaying `evolve_replies`; returns the model spec."""
    rules = [{"when": {"system_has": [EVOLVE_MARKER]}, "replies": list(evolve_replies)},
             {"when": {"instruction_has": [HELLO]},
              "replies": [{"tool": "shell", "arguments": {"command": HELLO_SOLUTION}}]}]
    path.write_text(yaml.safe_dump({"rules": rules}))
    return f"scripted:{path}"


def make_run(tmp_path: Path, host: str | None = None, name: str = "run",
             model: str = "ollama:scripted", **config: Any) -> Path:
    """`evoharness init` on the fixture suite, then run.yaml tuned for fast fault tests
    (k=1, no calibration or final exam) plus `config` overrides. The exam would run the held-out
    sum-numbers, the task most faults hit, four more times after the loop."""
    run_dir = tmp_path / name
    made = evoharness("init", run_dir, "--tasks", FIXTURE_TASKS, "--model", model,
                      "-k", "1", "--iterations", "0", host=host)
    assert made.returncode == 0, made.stderr
    edit_config(run_dir, calibration=False, exam={"on_stop": False}, **config)
    return run_dir


def edit_config(run_dir: Path, **fields: Any) -> None:
    path = run_dir / "run.yaml"
    data = yaml.safe_load(path.read_text())
    data.update(fields)
    path.write_text(yaml.safe_dump(data, sort_keys=False))


def rollouts(run_dir: Path) -> list[tuple[str, str, str]]:
    """(rollout_id, outcome, exit_reason) of every stored rollout."""
    with TraceStore(RunPaths(root=run_dir).db, read_only=True) as store:
        return store.con.execute("SELECT rollout_id, outcome, exit_reason FROM rollouts "
                                 "ORDER BY rollout_id").fetchall()


def result_files(run_dir: Path, iteration: int = 0) -> dict[str, dict[str, Any]]:
    folder = run_dir / "iterations" / f"it{iteration:03d}" / "rollouts"
    return {p.stem: json.loads(p.read_text()) for p in sorted(folder.glob("*.json"))}


def assert_clean_error(result: subprocess.CompletedProcess[str], *needles: str) -> None:
    """Exit 2, a one-message error naming what is wrong, and no traceback."""
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "Traceback" not in result.stderr + result.stdout
    assert "error" in result.stderr
    for needle in needles:
        assert needle in result.stderr, (needle, result.stderr)


@pytest.fixture
def unused_url() -> str:
    """A loopback URL nothing listens on (the port was bound, then released)."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    return f"http://127.0.0.1:{port}"
