"""Benchmark (not a test): how alike the two arms of a trial's pair run when both hold the same
harness (an A/A trial), with common sampling seeds, as trials now draw them (both arms of a pair
share a sampling key, tasks/results.py), and with each arm drawing its own, as before. Both ways
run in the same batches through the project's executor, so load and drift hit them alike. Every
difference between the arms of an A/A pair is noise a trial has to see through: a discordant
pair (one arm passed, the other failed) is what its sign test counts, and the per-task spread is
what widens its interval over tasks.

With `--entry ID` the change arm is the seed with that starter entry applied (an A/B of a fixed
size, every task paired k times, where a trial would stop as soon as its answer is clear): for an
entry whose claim is speed, what it costs or saves in model time beside what it does to passing.
`--task-ids` may name held-out tasks too: an entry tried on tasks it was not designed on.

Prints `pairs`, then for each way: `first_reply_same_*` (pairs whose first model reply is
identical), `outcome_same_*`, `discordant_*`, `pass_rate_*` (both arms), `aa_gain_*` (the A/A
gain over tasks with its interval, evolve/evaluate/compare.py, as a trial reports its effect; `gain_*`
with an entry), `*_pairs_*` (the same gain over pairs, these tasks held fixed, with Newcombe's
interval, evolve/evaluate/compare.py's pair_interval), `sign_test_*` (the discordant pairs' exact one-sided
p), both intervals at --confidence (default 0.95), and each arm's model time from the server's
own timings: `model_s_*` (seconds inside model calls a rollout), `decode_s_*` and `prefill_s_*`
(a rollout), `tokens_out_*` (a model call) and `model_calls_*` (a rollout); then `wall_time`.
Rollout results are kept in --dir; a run started again skips them.

Run: python benchmarks/pairing.py [--model embedded] [-k 3] [--first-attempt 0] [--workers 2]
        [--task-ids a,b] [--dir DIR] [--tasks SUITE] [--entry ID] [--ways common,independent]
        [--confidence 0.95]
With EVOHARNESS_REPRODUCIBLE=1 and --workers 1 the embedded server computes each reply from its
conversation alone (docs/trial.md), and the arms of a common pair part only where the change acts.
"""
from __future__ import annotations

import argparse
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from evoharness.agent.events import ModelTotals  # noqa: E402
from evoharness.evolve.evaluate.compare import compare, pair_interval  # noqa: E402
from evoharness.evolve.library.starter import starter_entries  # noqa: E402
from evoharness.text import comma_list  # noqa: E402
from evoharness.manifests.history import TaskCounts  # noqa: E402
from evoharness.tasks.executor import (  # noqa: E402
    Executor, HarnessTree, RolloutSpec, execute, make_executor,
)
from evoharness.tasks.results import RolloutResult  # noqa: E402
from evoharness.tasks.task import Task, load_suite  # noqa: E402
from evoharness.workspace.edits import apply_edits  # noqa: E402
from evoharness.workspace.repo import HarnessRepo  # noqa: E402

SUITE = ROOT / "tasks" / "suite"
# A pair shares a sampling key when both arms name the same trial_change (the key leaves the arm
# out); with a change id per arm, each arm draws its own seeds.
WAY_NAMES = ("common", "independent")


def ways(entry: str | None, names: Sequence[str] = WAY_NAMES) -> dict[str, tuple[str, str]]:
    """Each way's trial_change per arm; an entry's rollouts are named for it (one --dir can hold
    an A/A and an A/B without mixing them)."""
    label = entry or "aa"
    both = {"common": (label, label), "independent": (f"{label}-base", f"{label}-change")}
    return {name: both[name] for name in names}


def specs(tasks: Sequence[tuple[Task, str]], base: HarnessTree, change: HarnessTree, model: str,
          attempts: range, pairings: dict[str, tuple[str, str]]) -> list[RolloutSpec]:
    """Each way's pairs, attempt by attempt, so early batches cover every (task, split) each
    way. A pair's seeds are drawn from its attempt's number: other `attempts` are fresh draws."""
    return [RolloutSpec(run_id="pairing", iteration=0, task=task, split=split, attempt=attempt,
                        harness=harness, model=model, trial_change=change_id, trial_arm=arm)
            for attempt in attempts for task, split in tasks
            for changes in pairings.values()
            for change_id, arm, harness in zip(changes, ("base", "change"), (base, change))]


def first_reply(result: RolloutResult) -> str | None:
    return next((e.content for e in result.events if e.kind == "model_call"), None)


def report(way: str, pairs: list[tuple[RolloutResult, RolloutResult]], gain_name: str = "aa_gain",
           confidence: float = 0.95) -> None:
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

    level = f"{100 * confidence:.4g}%"
    gain = compare("base", arm(0), "change", arm(1), confidence=confidence)
    if gain.lo is not None:
        print(f"{gain_name}_{way}: {gain.mean * 100:+.1f} [{gain.lo * 100:+.1f}, "
              f"{gain.hi * 100:+.1f}] points over {len(totals)} tasks ({level})")
    paired = pair_interval(passed, confidence=confidence)
    print(f"{gain_name}_pairs_{way}: {paired.mean * 100:+.1f} [{paired.lo * 100:+.1f}, "
          f"{paired.hi * 100:+.1f}] points over {n} pairs ({level}, these tasks)")
    print(f"sign_test_{way}: {paired.wins} wins, {paired.losses} losses, "
          f"p = {paired.sign_test_p():.2g} (exact, one-sided)")
    report_model_time(way, pairs)


def report_model_time(way: str, pairs: list[tuple[RolloutResult, RolloutResult]]) -> None:
    """Each arm's model time from the server's own timings, a rollout's mean (a rollout that
    made no call spent none; n/a where no rollout's server reported the figure)."""
    arms = [[ModelTotals.of(pair[side].events) for pair in pairs] for side in (0, 1)]

    def per_rollout(side: int, name: str) -> float | None:
        values = [getattr(totals, name) for totals in arms[side]]
        reported = [value for value in values if value is not None]
        return sum(reported) / len(values) if reported else None

    def line(name: str, base: float | None, change: float | None, unit: str) -> None:
        if base is None or change is None:
            print(f"{name}_{way}: n/a (a server that does not report it)")
            return
        ratio = f", ratio {change / base:.2f}" if base else ""
        print(f"{name}_{way}: base {base:.1f}, change {change:.1f} {unit}{ratio}")

    for name in ("model_s", "decode_s", "prefill_s"):
        line(name, per_rollout(0, name), per_rollout(1, name), "s a rollout")
    out = [sum(e.tokens_out for pair in pairs for e in pair[side].events
               if e.kind == "model_call") for side in (0, 1)]
    calls = [sum(totals.model_calls for totals in arms[side]) for side in (0, 1)]
    line("tokens_out", *(out[side] / calls[side] if calls[side] else None for side in (0, 1)),
         "tokens a call")
    line("model_calls", per_rollout(0, "model_calls"), per_rollout(1, "model_calls"), "a rollout")


def run_pairs(executor: Executor, tasks: Sequence[tuple[Task, str]], base: HarnessTree,
              change: HarnessTree, model: str, attempts: range, out: Path,
              pairings: dict[str, tuple[str, str]]
              ) -> dict[str, list[tuple[RolloutResult, RolloutResult]]]:
    """Each way's pairs of results, running those not in `out` yet."""
    planned = specs(tasks, base, change, model, attempts, pairings)
    todo = [s for s in planned if not (out / f"{s.rollout_id}.json").is_file()]
    execute(executor, todo, out, progress=lambda r: print(
        f"  {r.rollout_id}: {r.outcome.value} ({r.duration_s:.0f} s)", file=sys.stderr,
        flush=True))
    results = [RolloutResult.model_validate_json((out / f"{s.rollout_id}.json").read_text())
               for s in planned]
    return {way: [(a, b) for a, b in zip(results[0::2], results[1::2])
                  if (a.trial_change, b.trial_change) == changes]
            for way, changes in pairings.items()}


def with_entry(repo: HarnessRepo, entry_id: str) -> HarnessTree:
    """The seed with a starter entry's edits applied, as one commit on top of it."""
    entries = {entry.id: entry for entry in starter_entries()}
    if entry_id not in entries:
        raise SystemExit(f"--entry: no starter entry {entry_id!r} (there are: "
                         f"{', '.join(sorted(entries))})")
    head = repo.commit_info()
    if head.sha == repo.commit_info("seed").sha:
        apply_edits(repo, entries[entry_id].edits)
        repo.commit_change(f"entry {entry_id}", change_id=entry_id, component="library entry")
    elif head.trailers.get("Change-Id") != entry_id:
        raise SystemExit(f"--entry: this --dir's harness is {head.summary!r}, not the seed with "
                         f"{entry_id}: use another --dir")
    return HarnessTree.at(repo)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--model", default="embedded")
    parser.add_argument("-k", type=int, default=3, help="pairs per task, each way")
    parser.add_argument("--first-attempt", type=int, default=0,
                        help="number the pairs' attempts from here: fresh sampling seeds for a "
                             "replication (default 0)")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--tasks", type=Path, default=SUITE)
    parser.add_argument("--task-ids", type=comma_list, default=None,
                        help="train or held-out tasks (default: the one-step train tasks)")
    parser.add_argument("--dir", type=Path, default=None, help="keep results here (resumable)")
    parser.add_argument("--entry", default=None,
                        help="the change arm: the seed with this starter entry (default: the seed)")
    parser.add_argument("--ways", type=comma_list, default=list(WAY_NAMES),
                        help="common, independent or both (default both)")
    parser.add_argument("--confidence", type=float, default=0.95,
                        help="of both intervals, over tasks and over pairs (default 0.95)")
    args = parser.parse_args()
    if not args.ways or set(args.ways) - set(WAY_NAMES):
        parser.error(f"--ways: {','.join(args.ways) or 'nothing'}; name common and/or independent")
    if not 0 < args.confidence < 1:
        parser.error(f"--confidence {args.confidence}: a level between 0 and 1, e.g. 0.99")
    if args.k < 1 or args.first_attempt < 0:
        parser.error(f"-k {args.k} --first-attempt {args.first_attempt}: k counts from 1, "
                     "attempts from 0")
    suite = load_suite(args.tasks)
    unknown = set(args.task_ids or ()) - {task.id for task, _ in suite.items()}
    if unknown:
        parser.error(f"--task-ids: no task {', '.join(sorted(unknown))} in {args.tasks}")
    tasks = [(task, split) for task, split in suite.items()
             if (task.id in args.task_ids if args.task_ids
                 else split == "train" and "one-step" in task.config.metadata.tags)]
    started = time.monotonic()
    with tempfile.TemporaryDirectory(prefix="pairing-") as scratch:
        where = args.dir or Path(scratch)
        (where / "rollouts").mkdir(parents=True, exist_ok=True)
        seed = where / "seed"
        repo = HarnessRepo(seed) if seed.exists() else HarnessRepo.create(seed)
        base = HarnessTree.at(repo, "seed")
        change = with_entry(repo, args.entry) if args.entry else base
        executor = make_executor("local", workers=args.workers, rollout_timeout=None,
                                 unsafe_no_sandbox=False)
        attempts = range(args.first_attempt, args.first_attempt + args.k)
        results = run_pairs(executor, tasks, base, change, args.model, attempts,
                            where / "rollouts", ways(args.entry, args.ways))
    print(f"pairs: {len(tasks) * args.k} each way ({len(tasks)} tasks x {args.k})")
    for way, pairs in results.items():
        report(way, pairs, "gain" if args.entry else "aa_gain", args.confidence)
    print(f"wall_time: {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
