"""Benchmark (not a test): scripted rollouts per minute with the local and the Ray executor at 1, 2
and 4 workers, and what Ray adds per rollout. The model is the scripted model playing the e2e code
agent from a script file (a test double: it answers at once, so the model is never the
bottleneck); each rollout runs a shell command in a bubblewrap sandbox, then the verifier.

It re-runs itself in a private network, PID and /tmp/ray namespace (as the tests do), so Ray
talks over loopback only. Prints `metric: value unit` lines. Run: python benchmarks/executors.py"""
from __future__ import annotations

import argparse
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import NamedTuple

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))  # run as a script from anywhere: tests.fixtures is not installed

CALLS = 200  # for the transport round trip


def main() -> None:
    if os.environ.get("EVO_BENCH_INSIDE") != "1":
        from tests.fixtures.ray_scenarios import in_namespaces

        argv, env = in_namespaces([sys.executable, __file__])
        os.execvpe(argv[0], argv, env | {"EVO_BENCH_INSIDE": "1"})
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--rollouts", type=int, default=24, help="per measurement (3 tasks)")
    measure(parser.parse_args().rollouts)


def measure(rollouts: int) -> None:
    import ray

    from evoharness.tasks.executor import HarnessTree, LocalExecutor, rollout_specs
    from evoharness.tasks.ray_executor import RayExecutor
    from evoharness.tasks.runner import plan_rollouts
    from evoharness.tasks.sandbox.bwrap import BwrapSandbox
    from evoharness.tasks.task import load_suite
    from tests.fixtures.e2e_agents import HELPFUL_RULE, solve_rule, write_script
    from evoharness.workspace.edits import AppendRule
    from evoharness.workspace.repo import HarnessRepo

    with tempfile.TemporaryDirectory() as scratch:
        model = write_script(Path(scratch) / "agents.yaml", [solve_rule(has=[HELPFUL_RULE])])
        repo = HarnessRepo.create(Path(scratch) / "workspace")
        AppendRule(text=HELPFUL_RULE).apply(repo.path)
        repo.commit_change("the rule the scripted agent acts on", change_id="bench-1",
                           component="system_prompt")
        plan = plan_rollouts(load_suite(ROOT / "tests" / "fixtures" / "e2e_suite").items(),
                             attempts=max(1, rollouts // 3))
        specs = rollout_specs(plan, run_id="bench", iteration=0, harness=HarnessTree.at(repo),
                              model=model)
        ray.init(num_cpus=4, include_dashboard=False, logging_level="WARNING")
        steady: dict[tuple[str, int], float] = {}
        for workers in (1, 2, 4):
            local = LocalExecutor(workers=workers, rollout_timeout=60,
                                  sandbox_factory=BwrapSandbox.for_task)
            on_ray = RayExecutor(address=None, workers=workers, rollout_timeout=60,
                                 unsafe_no_sandbox=False)
            for name, executor in (("local", local), ("ray", on_ray)):
                run = timed(executor, specs)
                steady[name, workers] = run.per_rollout
                print(f"{name}_rollouts_per_min_{workers}_workers: {60 / run.per_rollout:.1f} "
                      "rollouts/min")
                print(f"{name}_batch_rollouts_per_min_{workers}_workers: "
                      f"{60 * len(specs) / run.batch:.1f} rollouts/min")
                if workers == 1:
                    print(f"{name}_overhead_per_rollout: {1000 * run.overhead:.1f} ms")
                if name == "ray":
                    print(f"ray_workers_start_{workers}_workers: {run.start:.1f} s")
        print(f"ray_minus_local_per_rollout: "
              f"{1000 * (steady['ray', 1] - steady['local', 1]):.1f} ms")
        for workers in (2, 4):
            print(f"ray_speedup_{workers}_workers: {steady['ray', 1] / steady['ray', workers]:.2f} "
                  f"x (target {0.8 * workers:.1f})")
        print(f"ray_call_round_trip: {round_trip(specs[0]):.2f} ms")


class Timed(NamedTuple):
    batch: float  # seconds for the whole batch, workers' start included
    per_rollout: float  # seconds per rollout once the first result is in (workers up)
    overhead: float  # per_rollout less the time the rollouts themselves took (one worker)
    start: float  # until the first result, less that rollout's own time


def timed(executor, specs) -> Timed:
    """Runs the batch; every rollout must pass (else it did not do the work being timed)."""
    from evoharness.tasks.results import Outcome

    started = time.monotonic()
    arrivals, took = [], []
    for result in executor.results(specs):
        arrivals.append(time.monotonic())
        took.append(result.duration_s)
        if result.outcome != Outcome.PASS:
            sys.exit(f"{result.rollout_id} did not pass ({result.outcome}: {result.exit_reason})")
    per_rollout = (arrivals[-1] - arrivals[0]) / (len(arrivals) - 1)
    return Timed(arrivals[-1] - started, per_rollout, per_rollout - statistics.mean(took[1:]),
                 arrivals[0] - started - took[0])


def round_trip(spec) -> float:
    """Median ms for one actor call carrying a rollout spec and returning a result of one rollout:
    what Ray's transport costs, apart from the rollout itself."""
    import ray

    from evoharness.tasks.results import Outcome, RolloutResult

    result = RolloutResult(**spec.base(), outcome=Outcome.PASS)

    @ray.remote(num_cpus=1)
    class Echo:
        def run(self, spec, files):
            return result

    echo = Echo.remote()
    ray.get(echo.run.remote(spec, {}))
    times = []
    for _ in range(CALLS):
        start = time.perf_counter()
        ray.get(echo.run.remote(spec, {"task": ("k", None)}))
        times.append((time.perf_counter() - start) * 1000)
    return statistics.median(times)


if __name__ == "__main__":
    main()
