"""The exam's statistics (evolve/evaluate/compare.py) on simulated pass counts with known pass
probabilities: how often two equal harnesses are called different (false "better" / "worse"),
how often a real gain is called "better" (power), and how often the interval holds the true
difference (coverage), for a few numbers of tasks and rollouts per task.

    python benchmarks/exam.py [--trials N]
    python benchmarks/exam.py --rates RECORD [--split heldout] [-k 4] [--trials N]

Each task's pass probability under harness A is drawn uniformly from [0.05, 0.95]; under B it is
the same (null) or A's plus the gain, capped at 1. With --rates, A's are instead the pass rates
measured on the suite's held-out tasks (a benchmarks/suite.py record: its evaluation directory or
what it printed, or a JSON object of task id -> rate), and it prints the exam's power to see +10
and +20 points at the exam's default k. Prints `metric: value unit` lines."""
from __future__ import annotations

import argparse
import json
import random
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from evoharness.evolve.evaluate.compare import compare  # noqa: E402
from evoharness.errors import EvoError  # noqa: E402
from evoharness.evolve.config import ExamConfig  # noqa: E402
from evoharness.manifests.history import TaskCounts  # noqa: E402

SUITE = Path(__file__).resolve().parents[1] / "tasks" / "suite"
EXAM_K = ExamConfig().k  # the final exam's rollouts per held-out task per harness (--exam-k)


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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--trials", type=int, default=2000)
    parser.add_argument("--rates", type=Path, help="measured per-task pass rates: a "
                        "benchmarks/suite.py evaluation directory, its printed output, or JSON")
    parser.add_argument("--split", default="heldout", help="with --rates: the suite's tasks the "
                        "exam runs on (heldout; train or all to compare)")
    parser.add_argument("-k", type=int, default=EXAM_K, help=f"with --rates: rollouts per task "
                        f"per harness (default {EXAM_K}, the exam's)")
    args = parser.parse_args(argv)
    trials = args.trials
    if args.rates is not None:
        try:
            print("\n".join(measured(args.rates, args.split, args.k, trials)))
        except EvoError as error:
            print(f"error: {error}", file=sys.stderr)
            return 2
        return 0
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
    return 0


# --- measured pass rates (--rates) -------------------------------------------------------------

GAINS = (0.1, 0.2)  # the gains whose power is printed: +10 and +20 points
_ROW = re.compile(r"^(\S+)\s+(train|validation|heldout)\s+\S+\s+\S+\s+(\d+)/(\d+)\s")


def measured_rates(path: Path) -> dict[str, float]:
    """Per-task pass rates from a record: a `benchmarks/suite.py` evaluation directory (its
    plan.json and stored rollouts), the text that suite.py printed (its per-task table), or a JSON
    object of task id -> rate, or -> {"passes": P, "total": N}."""
    if path.is_dir():
        from evoharness.evolve.evaluate.evaluation import EvalDir, arm_counts

        folder = EvalDir(path)
        arms = arm_counts(folder, folder.plan())
        if len(arms) != 1:
            raise EvoError("the evaluation holds more than one harness", file=path,
                           hint="measure the seed alone with benchmarks/suite.py")
        [counts] = arms.values()
        return {task: c.passes / c.total for task, c in counts.items() if c.total}
    if not path.is_file():
        raise EvoError("no such record", file=path,
                       hint="a suite.py evaluation directory, its printed output, or a JSON file")
    text = path.read_text()
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except ValueError as error:
            raise EvoError(f"not valid JSON: {error}", file=path) from None
        data = data.get("rates", data) if isinstance(data, dict) else data
        if not isinstance(data, dict):
            raise EvoError("expected an object of task id -> rate", file=path)
        found = {}
        for task, value in data.items():
            if isinstance(value, dict):
                value = value.get("passes", 0) / value["total"] if value.get("total") else None
            if not isinstance(value, (int, float)) or not 0 <= value <= 1:
                raise EvoError("a rate must be a number from 0 to 1", file=path, field=task,
                               value=value)
            found[task] = float(value)
        return found
    rows = {m.group(1): int(m.group(3)) / int(m.group(4))
            for m in map(_ROW.match, text.splitlines()) if m and int(m.group(4))}
    if not rows:
        raise EvoError("no per-task rows found", file=path,
                       hint="give the output of `python benchmarks/suite.py`")
    return rows


def simulate_measured(p_a: list[float], k: int, gain: float, trials: int, rng: random.Random,
                      confidence: float = 0.95) -> float:
    """How often the exam calls B better, where B passes each task `gain` more often than A's
    measured rate (capped at 1)."""
    better = 0
    for _ in range(trials):
        a = {f"t{i}": _counts(p, k, rng) for i, p in enumerate(p_a)}
        b = {f"t{i}": _counts(min(1.0, p + gain), k, rng) for i, p in enumerate(p_a)}
        better += compare("A", a, "B", b, confidence=confidence).verdict == "better"
    return better / trials


def measured(path: Path, split: str, k: int, trials: int) -> list[str]:
    """The exam's power on the suite's `split` tasks at their measured rates: `metric` lines."""
    from evoharness.tasks.task import load_suite

    suite = load_suite(SUITE)
    wanted = {"heldout": suite.heldout, "train": suite.train,
              "all": list(suite.tasks)}.get(split)
    if wanted is None:
        raise EvoError("unknown split", field="--split", value=split,
                       hint="heldout, train or all")
    found = measured_rates(path)
    p_a = [found[t] for t in wanted if t in found]
    if not p_a:
        raise EvoError(f"the record measures none of the {split} tasks", file=path)
    rng = random.Random(12)
    lines = [f"tasks_measured_{split}: {len(p_a)} tasks",
             f"tasks_unmeasured_{split}: {len(wanted) - len(p_a)} tasks",
             f"mean_pass_rate_{split}: {100 * sum(p_a) / len(p_a):.1f} %",
             f"tasks_never_passed_{split}: {sum(p == 0 for p in p_a)} tasks",
             f"tasks_always_passed_{split}: {sum(p == 1 for p in p_a)} tasks"]
    null = simulate_measured(p_a, k, 0.0, trials, rng)
    lines.append(f"false_better_measured_k{k}: {100 * null:.1f} %")
    for gain in GAINS:
        power = simulate_measured(p_a, k, gain, trials, rng)
        lines.append(f"power_gain{round(100 * gain)}_measured_k{k}: {100 * power:.1f} %")
    return lines


if __name__ == "__main__":
    sys.exit(main())
