"""The exam's statistics (evolve/evaluate/compare.py) on simulated pass counts with known pass
probabilities: how often two equal harnesses are called different (false "better" / "worse"),
how often a real gain is called "better" (power), and how often the interval holds the true
difference (coverage), for a few numbers of tasks and rollouts per task.

    python benchmarks/exam.py [--trials N]

Each task's pass probability under harness A is drawn uniformly from [0.05, 0.95]; under B it is
the same (null) or A's plus the gain, capped at 1. Prints `metric: value unit` lines."""
from __future__ import annotations

import argparse
import random
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evoharness.evolve.evaluate.compare import compare  # noqa: E402
from evoharness.manifests.history import TaskCounts  # noqa: E402


def simulate(tasks: int, k: int, gain: float, trials: int, rng: random.Random,
             confidence: float = 0.95) -> dict[str, float]:
    calls = {"better": 0, "worse": 0, "covered": 0}
    for _ in range(trials):
        p_a = [rng.uniform(0.05, 0.95) for _ in range(tasks)]
        p_b = [min(1.0, p + gain) for p in p_a]
        a = {f"t{i}": _counts(p, k, rng) for i, p in enumerate(p_a)}
        b = {f"t{i}": _counts(p, k, rng) for i, p in enumerate(p_b)}
        result = compare("A", a, "B", b, confidence=confidence)
        truth = sum(pb - pa for pa, pb in zip(p_a, p_b)) / tasks
        calls["better"] += result.verdict == "better"
        calls["worse"] += result.verdict == "worse"
        calls["covered"] += result.lo is not None and result.lo <= truth <= result.hi
    return {key: value / trials for key, value in calls.items()}


def _counts(p: float, k: int, rng: random.Random) -> TaskCounts:
    return TaskCounts(passes=sum(rng.random() < p for _ in range(k)), total=k)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    trials = parser.parse_args().trials
    rng = random.Random(12)
    for tasks, k in ((3, 4), (7, 2), (7, 4), (20, 4)):
        null = simulate(tasks, k, 0.0, trials, rng)
        print(f"false_better_n{tasks}_k{k}: {100 * null['better']:.1f} %")
        print(f"false_any_difference_n{tasks}_k{k}: {100 * (null['better'] + null['worse']):.1f} %")
        print(f"coverage_null_n{tasks}_k{k}: {100 * null['covered']:.1f} %")
        for gain in (0.2, 0.4):
            real = simulate(tasks, k, gain, trials, rng)
            print(f"power_gain{round(100 * gain)}_n{tasks}_k{k}: {100 * real['better']:.1f} %")
            print(f"coverage_gain{round(100 * gain)}_n{tasks}_k{k}: {100 * real['covered']:.1f} %")


if __name__ == "__main__":
    main()
