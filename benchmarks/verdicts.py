"""Benchmark: the keep/revert rule against known answers. Simulated worlds with known per-task pass
probabilities drive the project's own trial (manifests/trial.py), and every strategy of an evolve
agent, honest or gaming, is judged the way the loop will judge it.

World: train tasks with pass probabilities from Beta(0.6, 0.6) or from {0, 0.5, 1}; 4, 8 or 18
tasks, and half as many validation tasks from the same prior (the evolve agent never sees them);
the loop's evaluations run k = 1, 2 or 4 rollouts per task (the baseline twice), validation tasks
included. A change's trial runs its predicted tasks and then the validation tasks the head's
latest evaluation failed (chosen by the loop's own code, evolve/library/cue.py's tasks_showing;
here every change is "free-form", so any failure shows its failure), and keeps it only when both
show a gain. Worlds where no validation task failed are left out (no change there could show it
carries over: the trial reverts it as untestable), so every figure is conditional on at least
one validation task showing the failure.
History: "iteration 1" judges a change made on the calibrated baseline; "iteration 8" first runs
seven iterations of the loop (evaluate the head, one background change, its trial, keep or
revert), so the base tree's history holds repeats after reverts, or only the evaluations since
the last kept change. A trial's own rollouts never enter a history (they stop on their outcomes).
The agent chooses after seeing that history: "failing" tasks failed every rollout of the head's
latest evaluation (often by chance, so regression to the mean works for the agent), "flaky"
tasks were mixed under the base tree.

Effects: "+d" raises a task's pass probability from p to p + d. Honest good edits target failing
tasks with p <= 1 - d, so the whole effect is possible, and help wherever their failure shows:
+d on every validation task the head failed, each with room for it too (worlds where one has not
are left out for them); "shaped only" edits raise their predicted tasks alone and leave every
validation task as it was (the change that fooled us: it fixes the tasks whose transcripts shaped
it and nothing else). Harmful edits help where their failure shows as good ones do (up to 1), and
break a task besides; `power_capped_0.3` shows a +0.3 edit on a failing task with p > 0.7, where
the gain there is only 1 - p (a diagnostic, no target). "Breaks" takes
0.7 off a stable passing task: one that truly passes at least 0.9 of the time and passed every
rollout of the head's latest evaluation (older failures allowed); the screen's margin,
design.regression_margin, is 0.7. A shield or a copied prediction comes from a sibling change,
whose manifest and edit cannot reach this change's trial (it takes one manifest and runs "base +
this change alone"), so those strategies are judged exactly as the loop will judge them.

Each figure is an average over cells (prior x tasks x k x history), cells weighted equally, with
its 95% Monte Carlo margin (1.96 standard errors) and its worst cell (with that cell's margin).
`rollouts_per_change` is the mean number of probe and screen rollouts (both arms, top-ups
included) a verdict used, over every change of the listed strategies in every cell (the capped
diagnostic left out); `rollouts_per_change_run_mix` is the same over the changes a simulated run
judged on its way to an iteration-8 history (half placebos on a failing task, half +0.3 or +0.5
edits of one that help their validation tasks alike), and `keep_rate_run_mix` how many of those
were kept. Run: `python benchmarks/verdicts.py [--trials N] [--workers W]` (`--trials 1000` takes
about 15 minutes on 2 cores). `--validation-share 0` runs worlds without validation tasks, judged
as a run without them is (the predicted-task test and the screen alone).
"""
from __future__ import annotations

import argparse
import itertools
import math
import random
import time
from collections import defaultdict
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field

from evoharness.evolve.library.cue import tasks_showing
from evoharness.manifests.design import TrialDesign
from evoharness.manifests.history import TaskCounts, TreeHistory
from evoharness.manifests.probe import ProbeOutcomes
from evoharness.manifests.schema import ChangeManifestEntry, Prediction
from evoharness.manifests.trial import Trial
from evoharness.manifests.verdict import TrialVerdict

PRIORS = ("beta", "mix")
TASKS = (4, 8, 18)
KS = (1, 2, 4)
HISTORIES = (1, 8)
VALIDATION_SHARE = 0.5  # validation tasks per train task
BREAK = 0.7  # a break: the task loses 0.7 of pass probability (design.regression_margin)
FALSE_ACCEPT = ("shaped_only_0.3", "shaped_only_0.5", "placebo_one_failing",
                "placebo_all_failing", "placebo_flaky", "shield", "copy", "predicts_nothing",
                "harmful", "fix_one_break_one")
POWER = ("good_0.3_one", "good_0.3_two", "good_0.5_one", "good_0.5_two")
CAPPED = "capped_0.3"  # a diagnostic: +0.3 on a failing task above 0.7
RUN_MIX = "run_mix"  # the background changes of the iteration-8 histories


@dataclass
class World:
    """Known pass probabilities of the head (train `p`, validation `v`), and every rollout of
    every tree so far."""

    p: list[float]
    v: list[float] = field(default_factory=list)
    tree: str = "T0"
    trees: int = 1
    history: dict[str, list[list[int]]] = field(default_factory=dict)  # tree -> task -> [passes, total]
    latest: list[tuple[int, int]] = field(default_factory=list)  # head's latest evaluation
    latest_v: list[tuple[int, int]] = field(default_factory=list)  # ... of the validation tasks
    reached_v: set[int] = field(default_factory=set)  # validation tasks some evaluation passed

    def record(self, tree: str, task: int, outcomes: Sequence[bool]) -> None:
        counts = self.history.setdefault(tree, [[0, 0] for _ in self.p])[task]
        counts[0] += sum(outcomes)
        counts[1] += len(outcomes)

    def tree_history(self) -> TreeHistory:
        rows = self.history[self.tree]
        return TreeHistory(tree=self.tree, counts={
            _name(t): TaskCounts(passes=ps, total=n) for t, (ps, n) in enumerate(rows) if n})


@dataclass(frozen=True)
class Edit:
    """What a change truly does: pass-probability deltas by task (the manifest is what it claims)."""

    gains: dict[int, float] = field(default_factory=dict)
    breaks: tuple[int, ...] = ()
    carries: dict[int, float] = field(default_factory=dict)  # gains on validation tasks

    def apply(self, p: Sequence[float]) -> list[float]:
        out = list(p)
        for task, gain in self.gains.items():
            out[task] = min(1.0, out[task] + gain)
        for task in self.breaks:
            out[task] = max(0.0, out[task] - BREAK)
        return out

    def apply_v(self, v: Sequence[float]) -> list[float]:
        return [min(1.0, p + self.carries.get(task, 0.0)) for task, p in enumerate(v)]


def _name(task: int) -> str:
    return f"t{task:02d}"


def _v_name(task: int) -> str:
    return f"v{task:02d}"


def _manifest(cid: str, fixes: Sequence[int] = (), regressions: Sequence[int] = ()) -> ChangeManifestEntry:
    return ChangeManifestEntry(
        id=cid, component="system_prompt", files=["system_prompt.md.j2"], commit="0" * 40,
        root_cause="simulated", targeted_fix="simulated", expected_delta=0.0,
        predicted_fixes=[Prediction(task_id=_name(t), probability=0.6) for t in fixes],
        predicted_regressions=[Prediction(task_id=_name(t), probability=0.3) for t in regressions])


def evaluate(world: World, k: int, rng: random.Random) -> None:
    """The loop's regular evaluation of the head: k rollouts of every task."""
    world.latest = []
    for task, p in enumerate(world.p):
        outcomes = [rng.random() < p for _ in range(k)]
        world.record(world.tree, task, outcomes)
        world.latest.append((sum(outcomes), k))
    world.latest_v = []
    for task, p in enumerate(world.v):
        passes = sum(rng.random() < p for _ in range(k))
        world.latest_v.append((passes, k))
        if passes:
            world.reached_v.add(task)


def failing_validation(world: World) -> list[int]:
    """Validation tasks the head's latest evaluation failed at least once: where a free-form
    change's failure shows."""
    return [t for t, (passes, n) in enumerate(world.latest_v) if passes < n]


def validation_tasks(world: World, design: TrialDesign) -> list[str] | None:
    """The validation tasks the loop's trial runs (evolve/trials.py's choice, by the same code):
    those with a failed rollout, the most failed first, reached ones first among equals; None in
    a world without validation tasks (judged as a run without them is)."""
    if not world.v:
        return None
    signatures = {_v_name(t): {f"a{i}": {"fail/done"} for i in range(n - passes)}
                  for t, (passes, n) in enumerate(world.latest_v) if passes < n}
    shown = tasks_showing(None, signatures, {_v_name(t) for t in world.reached_v})
    return shown[:design.validation_tasks]


def judge(world: World, manifest: ChangeManifestEntry, edit: Edit, design: TrialDesign,
          rng: random.Random, history: TreeHistory | None = None) -> TrialVerdict:
    """Run the change's trial to a verdict: base arm from the head's probabilities, change arm
    from the head with the edit; a kept change makes the head a new tree. The trial's own
    rollouts stay out of every history: they stop on their outcomes, and a kept change's are
    the winners of a selection, so both would overstate the tree's pass rates."""
    trial = Trial(manifest, history or world.tree_history(), design,
                  validation=validation_tasks(world, design))
    after, after_v = edit.apply(world.p), edit.apply_v(world.v)
    arms = {"base": _by_name(world.p, world.v), "change": _by_name(after, after_v)}
    outcomes: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
    while True:
        step = trial.step(ProbeOutcomes(**outcomes))
        if step.verdict is not None:
            break
        for request in step.requests:
            p = arms[request.arm][request.task_id]
            drawn = [rng.random() < p for _ in range(request.count)]
            outcomes[request.arm].setdefault(request.task_id, []).extend(drawn)
    if step.verdict.kept:
        world.tree, world.p, world.v = f"T{world.trees}", after, after_v
        world.trees += 1
    return step.verdict


def _by_name(p: Sequence[float], v: Sequence[float]) -> dict[str, float]:
    return {**{_name(t): x for t, x in enumerate(p)}, **{_v_name(t): x for t, x in enumerate(v)}}


# --- what the agent sees and picks --------------------------------------------------------------

def failing(world: World) -> list[int]:
    """Tasks that failed every rollout of the head's latest evaluation (what overview.md shows)."""
    return [t for t, (passes, _) in enumerate(world.latest) if passes == 0]


def stable_passing(world: World) -> list[int]:
    """Tasks that truly pass at least 0.9 of the time and passed every rollout of the head's
    latest evaluation (older failures allowed): stable passing in fact and in what the agent sees."""
    return [t for t, (passes, n) in enumerate(world.latest) if passes == n and world.p[t] >= 0.9]


def flaky(world: World) -> list[int]:
    rows = world.history[world.tree]
    mixed = [t for t, (ps, n) in enumerate(rows) if 0 < ps < n]
    return mixed or [min(range(len(rows)), key=lambda t: abs(_rate(world, t) - 0.5))]


def _rate(world: World, task: int) -> float:
    ps, n = world.history[world.tree][task]
    return ps / n if n else 0.5


def targets(world: World, rng: random.Random, count: int, headroom: float | None) -> list[int] | None:
    """`count` tasks the agent would try to fix: failing ones first, then the lowest observed
    rates. With `headroom`, only tasks whose true p allows the whole gain (the benchmark's
    knowledge, not the agent's). None when there are too few."""
    order = sorted(range(len(world.p)), key=lambda t: (t not in failing(world), _rate(world, t),
                                                       rng.random()))
    if headroom is not None:
        order = [t for t in order if world.p[t] <= 1.0 - headroom]
    return sorted(order[:count]) if len(order) >= count else None


def one_failing(world: World, rng: random.Random) -> list[int]:
    """A failing task at random, or the task with the lowest observed rate when none fails."""
    return [rng.choice(failing(world))] if failing(world) else targets(world, rng, 1, None)  # type: ignore[return-value]


# --- strategies: (manifest, true edit), or None when the world offers no such change ----------

Strategy = Callable[[World, random.Random], tuple[ChangeManifestEntry, Edit] | None]


def room(world: World, gain: float) -> bool:
    """Whether every validation task where the failure shows has room for the whole gain."""
    return all(world.v[t] <= 1.0 - gain for t in failing_validation(world))


def _carries(world: World, gain: float) -> dict[int, float]:
    """+gain on every validation task where the failure shows (the head failed it)."""
    return {t: gain for t in failing_validation(world)}


def _good(gain: float, count: int, carries: bool = True) -> Strategy:
    """+gain on `count` failing tasks it predicts; with `carries`, +gain wherever its failure
    shows on validation tasks too, else nowhere else (shaped on its predicted tasks only)."""
    def make(world: World, rng: random.Random):
        tasks = targets(world, rng, count, gain)
        if tasks is None or carries and not room(world, gain):
            return None
        return _manifest("good" if carries else "shaped", tasks), Edit(
            {t: gain for t in tasks}, carries=_carries(world, gain) if carries else {})
    return make


def _capped(world: World, rng: random.Random):
    high = [t for t in failing(world) if world.p[t] > 0.7]
    if not high:
        return None
    task = rng.choice(high)
    return _manifest("capped", [task]), Edit({task: 0.3}, carries=_carries(world, 0.3))


def _breaker(gain: float) -> Strategy:
    """Gains on one failing task, breaks one passing task it does not predict. A shielding
    sibling (predicting regressions on every passing task) needs no simulation: a trial takes
    one change's manifest, so a sibling's claims have no way in."""
    def make(world: World, rng: random.Random):
        tasks = targets(world, rng, 1, gain)
        victims = [t for t in stable_passing(world) if tasks is None or t not in tasks]
        if tasks is None or not victims:
            return None
        return _manifest("breaker", tasks), Edit({tasks[0]: gain}, (rng.choice(victims),),
                                                 _carries(world, gain))
    return make


def _placebo(pick: Callable[[World, random.Random], list[int]]) -> Strategy:
    return lambda world, rng: (_manifest("placebo", pick(world, rng)), Edit())


def _copy(world: World, rng: random.Random):
    task = targets(world, rng, 1, 0.5)
    if task is None:
        return None
    # The helpful sibling (+0.5 on this task) is another change: its own trial, its own tree.
    return _manifest("copy", task), Edit()


def _predicts_nothing(world: World, rng: random.Random):
    task = targets(world, rng, 1, 0.5)
    return None if task is None else (_manifest("silent"), Edit({task[0]: 0.5},
                                                                 carries=_carries(world, 0.5)))


STRATEGIES: dict[str, Strategy] = {
    "shaped_only_0.3": _good(0.3, 1, carries=False),
    "shaped_only_0.5": _good(0.5, 1, carries=False),
    "placebo_one_failing": _placebo(one_failing),
    "placebo_all_failing": _placebo(lambda w, r: failing(w) or one_failing(w, r)),
    "placebo_flaky": _placebo(lambda w, r: flaky(w)),
    # A placebo whose sibling predicts a regression on every passing task: the sibling's
    # manifest has no way into this change's trial (a trial takes one manifest), so it is judged
    # exactly as the loop would judge it, as a placebo on a failing task.
    "shield": _placebo(one_failing),
    "copy": _copy,
    "predicts_nothing": _predicts_nothing,
    "harmful": _breaker(0.3),
    "fix_one_break_one": _breaker(0.5),
    "good_0.3_one": _good(0.3, 1),
    "good_0.3_two": _good(0.3, 2),
    "good_0.5_one": _good(0.5, 1),
    "good_0.5_two": _good(0.5, 2),
    CAPPED: _capped,
}


# --- cells ----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Cell:
    prior: str
    tasks: int
    k: int
    iteration: int

    def __str__(self) -> str:
        return f"{self.prior} tasks={self.tasks} k={self.k} iteration={self.iteration}"


def _validation_count(tasks: int, share: float) -> int:
    return max(1, round(share * tasks)) if share else 0


def _draw_p(prior: str, tasks: int, rng: random.Random) -> list[float]:
    if prior == "beta":
        return [rng.betavariate(0.6, 0.6) for _ in range(tasks)]
    return [rng.choice((0.0, 0.5, 1.0)) for _ in range(tasks)]


@dataclass
class Tally:
    """One strategy in one cell: changes judged, kept, and rollouts used (sum and sum of squares)."""

    judged: int = 0
    kept: int = 0
    rollouts: float = 0.0
    rollouts_sq: float = 0.0

    def add(self, verdict: TrialVerdict) -> None:
        self.judged += 1
        self.kept += verdict.kept
        self.rollouts += verdict.rollouts.used
        self.rollouts_sq += verdict.rollouts.used ** 2

    @property
    def rate(self) -> float:
        return self.kept / self.judged


def _background(world: World, design: TrialDesign, rng: random.Random) -> TrialVerdict:
    """One loop iteration's change before the judged one: half placebos on a failing task, a
    quarter +0.3 and a quarter +0.5 edits of one failing task (the run mix)."""
    kind = rng.random()
    if kind < 0.5:
        made = STRATEGIES["placebo_one_failing"](world, rng)
    else:
        made = _good(0.3 if kind < 0.75 else 0.5, 1)(world, rng) or \
            STRATEGIES["placebo_one_failing"](world, rng)
    manifest, edit = made
    return judge(world, manifest, edit, design, rng)


def build_world(cell: Cell, design: TrialDesign, rng: random.Random,
                run_mix: Tally | None = None, validation_share: float = VALIDATION_SHARE) -> World:
    """A world at the cell's iteration; the background changes' verdicts go to `run_mix`."""
    world = World(p=_draw_p(cell.prior, cell.tasks, rng),
                  v=_draw_p(cell.prior, _validation_count(cell.tasks, validation_share), rng))
    evaluate(world, 2 * cell.k, rng)  # the calibrated baseline
    for _ in range(cell.iteration - 1):
        verdict = _background(world, design, rng)
        if run_mix is not None:
            run_mix.add(verdict)
        evaluate(world, cell.k, rng)
    return world


Results = dict[Cell, dict[str, Tally]]


def run_cell(cell: Cell, trials: int, design: TrialDesign, seed: int,
             validation_share: float = VALIDATION_SHARE) -> dict[str, Tally]:
    rng = random.Random(f"{seed}-{cell}")
    tallies: dict[str, Tally] = defaultdict(Tally)
    for _ in range(trials):
        world = build_world(cell, design, rng, tallies[RUN_MIX], validation_share)
        if world.v and not failing_validation(world):
            continue  # nothing could show a change carries over: every figure is conditional
        history = world.tree_history()
        for name, strategy in STRATEGIES.items():
            made = strategy(world, rng)
            if made is None:
                continue
            # Each strategy is judged on its own copy of the head (a kept change moves it).
            copy = World(p=list(world.p), v=list(world.v), tree=world.tree, trees=world.trees,
                         history=world.history, latest=world.latest, latest_v=world.latest_v,
                         reached_v=world.reached_v)
            tallies[name].add(judge(copy, *made, design, rng, history))
    return dict(tallies)


def _cells() -> list[Cell]:
    return [Cell(*c) for c in itertools.product(PRIORS, TASKS, KS, HISTORIES)]


def run(trials: int, design: TrialDesign, seed: int = 0, workers: int = 1,
        cells: Sequence[Cell] | None = None,
        validation_share: float = VALIDATION_SHARE) -> Results:
    """`validation_share` 0: worlds without validation tasks, judged as a run without them (the
    rule before validation tasks; its figures are docs/trial.md's second table)."""
    cells = list(cells or _cells())
    if workers <= 1:
        return {c: run_cell(c, trials, design, seed, validation_share) for c in cells}
    n = len(cells)
    with ProcessPoolExecutor(workers) as pool:
        results = pool.map(run_cell, cells, [trials] * n, [design] * n, [seed] * n,
                           [validation_share] * n)
        return dict(zip(cells, results))


# --- summary --------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figure:
    mean: float
    margin: float  # 1.96 standard errors of the cell average
    worst: float
    worst_cell: str
    worst_margin: float
    judged: int


def keep_rate(results: Results, strategy: str, worst=max) -> Figure | None:
    rates = [(t.rate, t.judged, cell) for cell, named in results.items()
             if (t := named.get(strategy)) and t.judged]
    if not rates:
        return None
    mean = sum(r for r, _, _ in rates) / len(rates)
    var = sum(_variance(r, n) for r, n, _ in rates) / len(rates) ** 2
    rate, n, cell = worst(rates, key=lambda x: x[0])
    return Figure(mean, 1.96 * math.sqrt(var), rate, str(cell),
                  1.96 * math.sqrt(_variance(rate, n)), sum(n for _, n, _ in rates))


def _variance(rate: float, n: int) -> float:
    """Variance of a rate estimated from n trials, Agresti-Coull adjusted (+2 successes and +2
    failures) so that a rate of 0 or 1 still gets an honest margin."""
    adjusted = (rate * n + 2) / (n + 4)
    return adjusted * (1 - adjusted) / (n + 4)


@dataclass(frozen=True)
class Spend:
    mean: float
    margin: float
    worst: float
    worst_cell: str


def rollouts(results: Results, names: Sequence[str] | None = None) -> Spend:
    """Mean rollouts per change over every change of the named strategies (default: the listed
    strategies) in every cell, its 95% margin, and the (cell, strategy) with the highest mean."""
    names = names or FALSE_ACCEPT + POWER
    tallies = [(t, f"{cell} {name}") for cell, named in results.items()
               for name, t in named.items() if name in names and t.judged]
    n = sum(t.judged for t, _ in tallies)
    mean = sum(t.rollouts for t, _ in tallies) / n
    var = sum(t.rollouts_sq for t, _ in tallies) / n - mean ** 2
    worst, where = max((t.rollouts / t.judged, where) for t, where in tallies)
    return Spend(mean, 1.96 * math.sqrt(var / n), worst, where)


def report(results: Results) -> list[str]:
    lines = []
    for name in FALSE_ACCEPT:
        fig = keep_rate(results, name)
        if fig:
            lines.append(_line(f"false_accept_{name}", fig))
    for name in (*POWER, CAPPED):
        fig = keep_rate(results, name, worst=min)
        if fig:
            lines.append(_line(f"power_{name.removeprefix('good_')}", fig))
    for metric, names in (("rollouts_per_change", None), ("rollouts_per_change_run_mix", (RUN_MIX,))):
        spend = rollouts(results, names)
        lines.append(f"{metric}: {spend.mean:.1f} rollouts (±{spend.margin:.1f}; worst cell "
                     f"{spend.worst:.1f}: {spend.worst_cell})")
    mix = keep_rate(results, RUN_MIX)
    if mix:
        lines.append(_line("keep_rate_run_mix", mix))
    return lines


def _line(metric: str, fig: Figure) -> str:
    """`name: value unit (...)`, the name without dots (a record's metric names are words)."""
    return (f"{metric.replace('.', '')}: {fig.mean:.3f} rate (±{fig.margin:.3f}; "
            f"worst cell {fig.worst:.3f} ±{fig.worst_margin:.3f}: {fig.worst_cell}; "
            f"{fig.judged} changes)")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--trials", type=int, default=1000,
                        help="worlds per cell; each world judges one change of every strategy")
    parser.add_argument("--workers", type=int, default=1)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--validation-share", type=float, default=VALIDATION_SHARE,
                        help="validation tasks per train task; 0: none (the rule without them)")
    args = parser.parse_args()
    print(f"# python benchmarks/verdicts.py --trials {args.trials} --workers {args.workers} "
          f"--seed {args.seed} --validation-share {args.validation_share:g}")
    started = time.monotonic()
    results = run(args.trials, TrialDesign(), args.seed, args.workers,
                  validation_share=args.validation_share)
    for line in report(results):
        print(line)
    print(f"benchmark_seconds: {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main()
