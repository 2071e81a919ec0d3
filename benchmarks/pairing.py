"""Benchmark (not a test): how alike the two arms of a trial's pair run when both hold the same
harness (an A/A trial), with common sampling seeds, as trials now draw them (both arms of a pair
share a sampling key, tasks/results.py), and with each arm drawing its own, as before. Both ways
run in the same batches through the project's executor, so load and drift hit them alike. Every
difference between the arms of an A/A pair is noise a trial has to see through: a discordant
pair (one arm passed, the other failed) is what its sign test counts, and the per-task spread is
what widens its interval over tasks.

Prints `pairs`, then for `common` and `independent` seeds: `first_reply_same_*` (pairs whose
first model reply is identical), `outcome_same_*`, `discordant_*`, `pass_rate_*` (both arms) and
`aa_gain_*` (the A/A gain over tasks with its 95% interval, evolve/compare.py, as a trial reports
its effect); then `wall_time`. Rollout results are kept in --dir; a run started again skips them.

Run: python benchmarks/pairing.py [--model embedded] [-k 3] [--workers 2] [--task-ids a,b]
        [--dir DIR] [--tasks SUITE]
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evolve.compare import compare  # noqa: E402
from manifests.history import TaskCounts  # noqa: E402
from tasks.executor import (  # noqa: E402
    Executor, HarnessTree, RolloutSpec, execute, make_executor,
)
from tasks.results import RolloutResult  # noqa: E402
from tasks.task import Task, load_suite  # noqa: E402
from workspace.repo import HarnessRepo  # noqa: E402

SUITE = ROOT / "tasks" / "suite"
# A pair shares a sampling key when both arms name the same trial_change (the key leaves the arm
# out); with a change id per arm, each arm draws its own seeds.
WAYS = {"common": ("aa", "aa"), "independent": ("aa-base", "aa-change")}


def specs(tasks: list[Task], harness: HarnessTree, model: str, k: int) -> list[RolloutSpec]:
    """Both ways' pairs, attempt by attempt, so early batches cover every task both ways."""
    return [RolloutSpec(run_id="pairing", iteration=0, task=task, split="train", attempt=attempt,
                        harness=harness, model=model, trial_change=change, trial_arm=arm)
            for attempt in range(k) for task in tasks for changes in WAYS.values()
            for change, arm in zip(changes, ("base", "change"))]


def first_reply(result: RolloutResult) -> str | None:
    return next((e.content for e in result.events if e.kind == "model_call"), None)


def report(way: str, pairs: list[tuple[RolloutResult, RolloutResult]]) -> None:
    n = len(pairs)
    same_first = sum(first_reply(a) == first_reply(b) for a, b in pairs)
    passed = [(a.outcome.value == "pass", b.outcome.value == "pass") for a, b in pairs]
    print(f"first_reply_same_{way}: {same_first}/{n} pairs")
    print(f"outcome_same_{way}: {sum(a == b for a, b in passed)}/{n} pairs")
    print(f"discordant_{way}: {sum(a != b for a, b in passed)}/{n} pairs")
    print(f"pass_rate_{way}: {sum(a for a, _ in passed)}/{n} base, "
          f"{sum(b for _, b in passed)}/{n} change")
    totals = Counter(base.task_id for base, _ in pairs)

    def arm(side: int) -> dict[str, TaskCounts]:
        wins = Counter(base.task_id for (base, _), both in zip(pairs, passed) if both[side])
        return {task: TaskCounts(passes=wins[task], total=n) for task, n in totals.items()}

    gain = compare("base", arm(0), "change", arm(1), confidence=0.95)
    if gain.lo is not None:
        print(f"aa_gain_{way}: {gain.mean * 100:+.1f} [{gain.lo * 100:+.1f}, "
              f"{gain.hi * 100:+.1f}] points over {len(totals)} tasks")


def run_pairs(executor: Executor, tasks: list[Task], harness: HarnessTree, model: str, k: int,
              out: Path) -> dict[str, list[tuple[RolloutResult, RolloutResult]]]:
    """Each way's pairs of results, running those not in `out` yet."""
    planned = specs(tasks, harness, model, k)
    todo = [s for s in planned if not (out / f"{s.rollout_id}.json").is_file()]
    execute(executor, todo, out, progress=lambda r: print(
        f"  {r.rollout_id}: {r.outcome.value} ({r.duration_s:.0f} s)", file=sys.stderr,
        flush=True))
    results = [RolloutResult.model_validate_json((out / f"{s.rollout_id}.json").read_text())
               for s in planned]
    return {way: [(a, b) for a, b in zip(results[0::2], results[1::2])
                  if (a.trial_change, b.trial_change) == changes]
            for way, changes in WAYS.items()}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("-k", type=int, default=3, help="pairs per task, each way")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", type=Path, default=SUITE)
    parser.add_argument("--task-ids", type=lambda s: s.split(","), default=None,
                        help="default: the suite's one-step train tasks")
    parser.add_argument("--dir", type=Path, default=None, help="keep results here (resumable)")
    args = parser.parse_args()
    tasks = [task for task, split in load_suite(args.tasks).items() if split == "train" and (
        task.id in args.task_ids if args.task_ids else "one-step" in task.config.metadata.tags)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pairing-") as scratch:
        where = args.dir or Path(scratch)
        (where / "rollouts").mkdir(parents=True, exist_ok=True)
        seed = where / "seed"
        repo = HarnessRepo(seed) if seed.exists() else HarnessRepo.create(seed)
        executor = make_executor("local", workers=args.workers, rollout_timeout=None,
                                 unsafe_no_sandbox=False)
        ways = run_pairs(executor, tasks, HarnessTree.at(repo, "seed"), args.model, args.k,
                         where / "rollouts")
    print(f"pairs: {len(tasks) * args.k} each way ({len(tasks)} tasks x {args.k})")
    for way, pairs in ways.items():
        report(way, pairs)
    print(f"wall_time: {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
