"""How hard the built-in suite is for a harness on a model: each task's pass rate, and the spread.

Each task's pass rate over k rollouts, with a 95% Wilson interval, then how many tasks were never
passed, always passed and passed sometimes, per split and per tier. The exam can see a harness
gain only on tasks the seed passes sometimes but not always.

    python benchmarks/suite.py [-k 4] [--subset all|train|validation|heldout|demo] [--tasks ID,ID]
                               [--family NAME,NAME] [--model embedded] [--harness SEED_DIR]
                               [--workers 2] [--dir DIR]

The rollouts are stored in an evaluation directory (`evoharness eval`'s format, so `evoharness
compare` and SQL read it too), DIR/<model>-k<k>-<selection>[-<harness>]: run the same command
again to finish a killed run (stored rollouts are not run again) or to print a finished one
without running anything. A measurement longer than one sitting goes on on another machine with
`--keep KEPT`: the rollout files are copied from KEPT/<same name>/ before running and back after
(commit them), and stored ones are not run again. `--run RUN` runs nothing: it reads a run's
baseline instead (iteration 0, the seed on the run's model: k rollouts per task, 2k when
calibrated), so a night on the built-in suite measures it on the way. Prints one line per task,
then `metric: value unit` lines."""
from __future__ import annotations

import argparse
import hashlib
import re
import shutil
import sys
import time
from collections import Counter
from collections.abc import Mapping
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.text import comma_list
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.task import Suite, Task, load_suite
from evoharness.traces.store import TraceStore
from evoharness.workspace.repo import SEED_DIR

ROOT = Path(__file__).resolve().parent.parent
SUITE = ROOT / "tasks" / "suite"
DEFAULT_DIR = ROOT / "runs" / "suite-benchmark"
SUBSETS = ("all", "train", "validation", "heldout", "demo")
SIDES = ("train", "validation", "heldout")
INFORMATIVE = (0.2, 0.8)  # pass rates at which a task can show a gain or a loss
# Tiers: Harbor's difficulty, except that an easy task tagged one-step is shown as its own tier.
ONE_STEP = "one-step"
TIERS = (ONE_STEP, "easy", "medium", "hard")


class TaskRate(BaseModel):
    """One task's measured pass rate."""

    model_config = ConfigDict(frozen=True)

    task_id: str
    split: str
    difficulty: str  # the tier (TIERS)
    category: str
    passes: int
    total: int  # scored rollouts (infra errors never count)
    lo: float
    hi: float

    @property
    def rate(self) -> float:
        return self.passes / self.total


def select(suite: Suite, subset: str, task_ids: list[str] | None,
           families: list[str] | None = None) -> list[str]:
    """The tasks to measure, in suite order: `task_ids` when given, else the subset's, narrowed to
    the instances of `families` (task.toml's metadata.family) when those are given."""
    if subset not in SUBSETS:
        raise EvoError("unknown subset", field="--subset", value=subset, hint=f"one of {SUBSETS}")
    if families:
        known = {family_of(task) for task in suite.tasks.values()} - {None}
        unknown = sorted(set(families) - known)
        if unknown:
            raise EvoError("no such task family in the suite", file=suite.root, field="--family",
                           value=unknown, hint=f"families: {', '.join(sorted(known))}")
        picked = select(suite, subset, task_ids)
        return [t for t in picked if family_of(suite.tasks[t]) in families]
    if task_ids:
        unknown = sorted(set(task_ids) - set(suite.tasks))
        if unknown:
            raise EvoError("tasks not in the suite", file=suite.root, field="--tasks",
                           value=unknown)
        wanted = set(task_ids)
    elif subset == "demo":
        wanted = set(suite.demo_tasks)
    else:
        wanted = {t.id for t, split in suite.items() if subset in ("all", split)}
    return [t.id for t, _ in suite.items() if t.id in wanted]


def family_of(task: Task) -> str | None:
    """The task family a generated task is an instance of (task.toml's metadata.family)."""
    return (task.config.metadata.model_extra or {}).get("family")


def eval_dir(base: Path, model: str, k: int, subset: str, task_ids: list[str] | None,
             harness: str | None = None, families: list[str] | None = None) -> Path:
    """One evaluation directory per model, k, selection and harness (none: the seed), so each
    command resumes its own."""
    chosen = subset if not task_ids else \
        "tasks-" + hashlib.sha1(",".join(sorted(task_ids)).encode()).hexdigest()[:8]
    if families:
        chosen += "-families-" + hashlib.sha1(",".join(sorted(families)).encode()).hexdigest()[:8]
    name = f"{_slug(model)}-k{k}-{chosen}" + (f"-{_slug(harness)}" if harness else "")
    return base / name


def _slug(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9.]+", "-", text).strip("-")


def wilson(passes: int, total: int, confidence: float = 0.95) -> tuple[float, float]:
    from scipy.stats import binomtest  # imported when rates are shown: scipy is slow to load

    interval = binomtest(passes, total).proportion_ci(confidence_level=confidence,
                                                      method="wilson")
    return interval.low, interval.high


def rates(suite: Suite, counts: Mapping[str, TaskCounts]) -> list[TaskRate]:
    """Each measured task's rate, in suite order (tasks with no scored rollout are left out)."""
    found = []
    for task, split in suite.items():
        if task.id not in counts:
            continue
        c = counts[task.id]
        lo, hi = wilson(c.passes, c.total)
        meta = task.config.metadata
        tier = ONE_STEP if ONE_STEP in meta.tags else meta.difficulty
        found.append(TaskRate(task_id=task.id, split=split, difficulty=tier,
                              category=meta.category, passes=c.passes, total=c.total, lo=lo, hi=hi))
    return found


def spread(rows: list[TaskRate]) -> dict[str, int]:
    """How many tasks were never passed, always passed, and passed sometimes."""
    kinds = Counter("never" if r.passes == 0 else "always" if r.passes == r.total else "between"
                    for r in rows)
    informative = sum(INFORMATIVE[0] <= r.rate <= INFORMATIVE[1] for r in rows)
    return {"never": kinds["never"], "between": kinds["between"], "always": kinds["always"],
            "informative": informative}


def table(rows: list[TaskRate]) -> list[str]:
    width = max([len(r.task_id) for r in rows] + [4])
    lines = [f"{'task':<{width}}  split    tier      category         passes  rate  95% interval"]
    lines += [f"{r.task_id:<{width}}  {r.split:<7}  {r.difficulty:<8}  {r.category:<15}  "
              f"{r.passes:>2}/{r.total:<3}  {r.rate:4.2f}  [{r.lo:.2f}, {r.hi:.2f}]" for r in rows]
    return lines


class Stored(BaseModel):
    """What the evaluation's stored rollouts took, and how they ended."""

    model_config = ConfigDict(frozen=True)

    seconds: list[float]
    outcomes: dict[str, int]  # pass, fail, timeout (a failure; many: a loaded machine), infra_error


def metrics(rows: list[TaskRate], stored: Stored) -> list[str]:
    lines = [f"tasks_measured: {len(rows)} tasks", f"rollouts_scored: {sum(r.total for r in rows)}"
             " rollouts"]
    lines += [f"rollouts_{outcome}: {stored.outcomes.get(outcome, 0)} rollouts"
              for outcome in ("pass", "fail", "timeout", "infra_error")]
    if stored.seconds:
        lines.append(f"seconds_per_rollout: {sum(stored.seconds) / len(stored.seconds):.1f} s")
    groups = {"all": rows, **{s: [r for r in rows if r.split == s] for s in SIDES},
              **{t: [r for r in rows if r.difficulty == t] for t in TIERS}}
    for name, members in groups.items():
        if not members:
            continue
        mean = sum(r.rate for r in members) / len(members)
        lines.append(f"pass_rate_{name}: {100 * mean:.1f} % ({len(members)} tasks)")
        for kind, n in spread(members).items():
            lines.append(f"tasks_{kind}_{name}: {n} tasks")
    return lines


def measure(folder_path: Path, suite: Suite, task_ids: list[str], *, model: str, harness: str,
            k: int, workers: int, rollout_timeout: float
            ) -> tuple[dict[str, TaskCounts], Stored, int]:
    """Run (or finish) the evaluation; returns the stored counts, what the stored rollouts took
    and how they ended, and how many rollouts this call ran."""
    from evoharness.evolve.cli.run import rollout_line
    from evoharness.evolve.evaluate.evaluation import EvalDir, arm_counts, run_plan
    from evoharness.evolve.ledger.lock import RunLock
    from evoharness.evolve.evaluate.transfer import SuiteTasks, plan_eval, resolve_harness
    from rich.console import Console
    from evoharness.tasks.executor import make_executor

    folder = EvalDir(folder_path)
    folder.root.mkdir(parents=True, exist_ok=True)
    lock = RunLock(folder.lock)
    lock.acquire("suite benchmark")
    try:
        chosen = SuiteTasks(root=suite.root, split=None, tasks=task_ids)
        plan = folder.start(plan_eval(folder.root.name, [resolve_harness(harness, folder)],
                                      [model], [chosen], k))
        executor = make_executor("local", workers=workers, rollout_timeout=rollout_timeout,
                                 unsafe_no_sandbox=False)
        ran = run_plan(folder, plan, executor, rollout_line(Console(stderr=True, soft_wrap=True)))
    finally:
        lock.release()
    [counts] = arm_counts(folder, plan).values()
    with TraceStore(folder.db, read_only=True) as store:
        return counts, stored_rollouts(store, plan.eval_id), ran


def stored_rollouts(store: TraceStore, run_id: str, where: str = "TRUE") -> Stored:
    """What the stored rollouts of `run_id` (those `where` also selects) took and how they ended."""
    rows = store.con.execute(f"SELECT outcome, duration_s FROM rollouts WHERE run_id = ? AND "
                             f"{where}", [run_id]).fetchall()
    return Stored(seconds=[r[1] for r in rows], outcomes=Counter(r[0] for r in rows))


class Measured(BaseModel):
    """What the benchmark prints from: the tasks chosen and their stored rollouts."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    suite: Suite
    chosen: list[str]
    counts: dict[str, TaskCounts]
    stored: Stored
    ran: int  # rollouts this call ran


def from_run(run_dir: Path) -> Measured:
    """A run's baseline on the built-in suite (here or in another checkout), read, not run."""
    from evoharness.evolve.config import load_config
    from evoharness.traces.queries import EVALUATION, pass_counts

    paths, config = load_config(run_dir)
    suite = load_suite(config.tasks, config.split)
    if set(suite.tasks) != set(load_suite(SUITE).tasks):
        raise EvoError("not a run on the built-in suite", file=paths.config, field="tasks",
                       value=str(config.tasks), hint=f"the benchmark measures {SUITE}")
    chosen = [t.id for t, _ in suite.items()
              if config.task_ids is None or t.id in config.task_ids]
    print(f"{len(chosen)} tasks on {config.model}: the baseline of {run_dir}", file=sys.stderr)
    with TraceStore(paths.db, read_only=True) as store:
        counts = {task: TaskCounts(passes=c.passes, total=c.n)
                  for task, c in pass_counts(store.con, config.run_id, 0).items()}
        stored = stored_rollouts(store, config.run_id, f"iteration = 0 AND {EVALUATION}")
    return Measured(suite=suite, chosen=chosen, counts=counts, stored=stored, ran=0)


def run_benchmark(args: argparse.Namespace) -> Measured:
    """Run (or finish) the measurement the options ask for."""
    from evoharness.evolve.cli.run import default_model

    model = args.model or default_model()
    task_ids = comma_list(args.tasks) if args.tasks else None
    families = comma_list(args.family) if args.family else None
    suite = load_suite(SUITE)
    chosen = select(suite, args.subset, task_ids, families)
    folder = eval_dir(args.dir, model, args.k, args.subset, task_ids, args.harness, families)
    print(f"{len(chosen)} tasks x k={args.k} on {model}, stored in {folder}", file=sys.stderr)
    kept = args.keep / folder.name if args.keep else None
    if kept is not None:
        print(f"{carry(kept, folder / 'rollouts')} rollouts carried in from {kept}",
              file=sys.stderr)
    try:
        counts, stored, ran = measure(folder, suite, chosen, model=model,
                                      harness=args.harness or str(SEED_DIR), k=args.k,
                                      workers=args.workers, rollout_timeout=args.rollout_timeout)
    finally:  # a killed measurement keeps what it finished
        if kept is not None:
            print(f"{carry(folder / 'rollouts', kept)} rollouts kept in {kept}", file=sys.stderr)
    return Measured(suite=suite, chosen=chosen, counts=counts, stored=stored, ran=ran)


def parser() -> argparse.ArgumentParser:
    found = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    found.add_argument("-k", type=int, default=4, help="rollouts per task (default 4)")
    found.add_argument("--subset", default="all", help=f"one of {SUBSETS} (default all)")
    found.add_argument("--tasks", help="comma-separated task ids (instead of --subset)")
    found.add_argument("--family", help="comma-separated task families (tasks/suite/families/): "
                       "only their instances, within --subset")
    found.add_argument("--model", default=None, help="a model spec (default: the embedded one)")
    found.add_argument("--harness", help="a harness: a directory with harness.yaml, RUN or "
                       "RUN@REV, as `evoharness eval` takes it (default: the seed)")
    found.add_argument("--workers", type=int, default=2, help="concurrent rollouts (default 2)")
    found.add_argument("--rollout-timeout", type=float, default=300.0)
    found.add_argument("--dir", type=Path, default=DEFAULT_DIR,
                       help=f"where evaluations are stored (default {DEFAULT_DIR})")
    found.add_argument("--keep", type=Path, help="a folder to commit (e.g. benchmarks/results/"
                       "suite): rollout files are copied from it before running and back after")
    found.add_argument("--run", type=Path, help="read a run's baseline (iteration 0, the seed) "
                       "instead of running anything; the other options are then not used")
    return found


def carry(source: Path, target: Path) -> int:
    """Copy the rollout files in `source` that `target` lacks; returns how many."""
    target.mkdir(parents=True, exist_ok=True)
    missing = [f for f in sorted(source.glob("*.json")) if not (target / f.name).exists()]
    for found in missing:
        shutil.copyfile(found, target / found.name)
    return len(missing)


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)
    if args.k < 1:
        parser().error("-k must be at least 1")
    start = time.monotonic()
    try:
        found = from_run(args.run) if args.run is not None else run_benchmark(args)
    except EvoError as error:
        print(f"error: {error}", file=sys.stderr)
        return 2
    rows = rates(found.suite, found.counts)
    print("\n".join(table(rows)))
    print("\n".join(metrics(rows, found.stored)))
    # every rollout of these was an infra error (or is not run yet): no rate, said, not hidden
    print(f"tasks_without_a_scored_rollout: {len(set(found.chosen) - set(found.counts))} tasks")
    print(f"rollouts_run_now: {found.ran} rollouts")
    print(f"wall_seconds_now: {time.monotonic() - start:.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
