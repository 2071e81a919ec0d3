"""Benchmark (not a test): sandbox start latency and rollout throughput with the scripted model,
and the container backend's costs beside bubblewrap's on one task (a Dockerfile that installs a
command, on the tests' tiny base image): a sandbox's first command (the container starts), each
later command, the verification (a new container for the verifier), closing, and one scripted
rollout; the two arms alternate round by round, so machine load falls on both alike. Last, the
container's extra cost for a rollout of --commands commands as a share of a real model's rollout
(--real-rollout-s: the main job's 94 s a rollout, docs/demo.md).

Prints `metric: value unit` lines. Run: .venv/bin/python benchmarks/sandbox.py [--rounds N]
(needs podman or docker for the container figures; --no-container skips them)"""
from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

from evoharness.agent.clients.scripted import ScriptedModel, json_action
from evoharness.tasks.runner import run_rollouts
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_task
from evoharness.tasks.verifier import verify
from evoharness.workspace.repo import SEED_DIR
from evoharness.workspace.validate import load_harness

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: tests.fixtures is not installed

STEPS = [json_action("shell", command="ls"),
         json_action("shell", command='echo "Hello, world!" > hello.txt'),
         json_action("shell", command="cat hello.txt"),
         json_action("done", summary="done")]


def start_latency(runs: int = 100) -> float:
    with tempfile.TemporaryDirectory() as app:
        box = BwrapSandbox(Path(app))
        times = []
        for _ in range(runs):
            result = box.exec("true", timeout=30)
            assert result.exit_code == 0, result.output
            times.append(result.duration_ms)
    return statistics.median(times)


def throughput(workers: int, rollouts: int = 8) -> float:
    harness = load_harness(SEED_DIR)
    task = load_task(ROOT / "tests" / "fixtures" / "tasks" / "hello-world")
    with tempfile.TemporaryDirectory() as out:
        start = time.monotonic()
        run_rollouts(harness, "bench", [(task, "train")], lambda: ScriptedModel(list(STEPS)),
                     run_id="bench", iteration=0, out_dir=Path(out), attempts=rollouts,
                     workers=workers)
        return rollouts / (time.monotonic() - start)


def _one_sandbox(factory, task, commands: int) -> dict[str, float]:
    """Seconds a sandbox's first command, each later one (median), its verification and its
    close take."""
    box = factory(task)
    first = _timed(lambda: box.exec("true", timeout=60))
    later = statistics.median(_timed(lambda: box.exec("true", timeout=60)) for _ in range(commands))
    verification = _timed(lambda: verify(task, box))
    closing = _timed(box.close)
    return {"first_command": first, "command": later, "verification": verification,
            "close": closing}


def _timed(step) -> float:
    start = time.monotonic()
    step()
    return time.monotonic() - start


def _rollout_seconds(task, factory) -> float:
    harness = load_harness(SEED_DIR)
    with tempfile.TemporaryDirectory() as out:
        return _timed(lambda: run_rollouts(harness, "bench", [(task, "train")],
                                           ScriptedModel(list(STEPS)), run_id="bench",
                                           iteration=0, out_dir=Path(out), sandbox_factory=factory))


def backends(rounds: int, commands: int, real_rollout_s: float) -> None:
    """Bubblewrap and the container backend on the same task, alternated round by round."""
    from evoharness.tasks.sandbox.environments import EnvironmentSettings, environments
    from tests.fixtures.containers import ENGINE, base_image, tool_task

    if ENGINE is None:
        print("container figures: skipped (no working podman or docker)")
        return
    with tempfile.TemporaryDirectory() as scratch:
        home = Path(scratch) / "home"
        home.mkdir()
        (home / "bases.toml").write_text(f'[bases]\n"ubuntu:*" = "{base_image()}"\n')
        task = load_task(tool_task(Path(scratch) / "bench-tool"))
        arms = {"bubblewrap": BwrapSandbox.for_task,
                "container": environments(EnvironmentSettings(kind="container", home=home))}
        arms["container"].prepare([task]).raise_problems()  # the one-off build is not measured
        seen: dict[str, list[dict[str, float]]] = {name: [] for name in arms}
        for round_ in range(rounds):
            for name in (list(arms) if round_ % 2 == 0 else list(reversed(arms))):
                figures = _one_sandbox(arms[name], task, commands=10)
                figures["rollout"] = _rollout_seconds(task, arms[name])
                seen[name].append(figures)
    median = {name: {key: statistics.median(r[key] for r in runs) for key in runs[0]}
              for name, runs in seen.items()}
    for name, figures in median.items():
        for key, value in figures.items():
            print(f"{name}_{key}_median: {value * 1000:.0f} ms")
    host, box = median["bubblewrap"], median["container"]
    extra = (box["first_command"] - host["first_command"]) + \
        (commands - 1) * (box["command"] - host["command"]) + \
        (box["verification"] - host["verification"]) + (box["close"] - host["close"])
    print(f"container_extra_per_rollout_of_{commands}_commands: {extra:.2f} s")
    print(f"container_extra_share_of_a_{real_rollout_s:g}s_rollout: "
          f"{100 * extra / real_rollout_s:.1f} %")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--commands", type=int, default=15, help="commands in a real rollout")
    parser.add_argument("--real-rollout-s", type=float, default=94.0)
    parser.add_argument("--no-container", action="store_true")
    options = parser.parse_args()
    print(f"sandbox_start_latency_median: {start_latency():.1f} ms")
    for workers in (1, 2, 4):
        print(f"rollout_throughput_workers_{workers}: {throughput(workers) * 60:.1f} rollouts/min")
    if not options.no_container:
        backends(options.rounds, options.commands, options.real_rollout_s)


if __name__ == "__main__":
    main()
