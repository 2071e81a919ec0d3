"""The final exam of a run: the seed harness (twice, for the noise floor), the final harness and
the best iteration's (chosen on train pass rates) on the held-out tasks, k rollouts per task each
(run.yaml `exam:`), and, when asked for, the matched-budget baseline (best_of.py); the evolved
harnesses compared with the seed and the baseline, the baseline with the seed, paired by task,
all at one family-wise level, and recorded through the run ledger with what the evolution cost
(cost.py). Its rollouts live in the exam's own evaluation directory (evaluation.py), which the
loop never reads; the statistics are compare.py's. Resumable: stored rollouts are never run
again."""
from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Callable

from evoharness.errors import EvoError
from evoharness.files import write_model
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.results import RolloutResult, rollout_id
from evoharness.traces.queries import iteration_totals

from .best_of import BestOf, baseline_arm, baseline_record, best_of, pick_counts, run_picks
from .compare import InfraErrors, bonferroni, compare
from .cost import evolution_cost
from .evaluation import (Arm, EvalDir, EvalPlan, Progress, arm_counts, arm_infra, new_plan,
                         run_plan)
from ..ledger import Phase
from ..ledger.records import BestOfRecord, EvolutionCost, ExamArm, ExamRecord
from ..rollouts import run_executor
from ..run import Run

Say = Callable[[str], None]
SEED, SEED_AGAIN, FINAL, BEST = "seed", "seed-again", "final", "best"


def examine(run: Run, say: Say = lambda _: None, progress: Progress | None = None
            ) -> ExamRecord | None:
    """The exam of the run as it stands (its workspace head is the final harness): the stored
    record when this exam already finished, else run what is missing and record it. None when
    the run has no held-out tasks or no evaluation yet."""
    if not run.heldout_ids:
        say("no exam: the run has no held-out tasks")
        return None
    arms = _exam_arms(run)
    if arms is None:
        say("no exam: no iteration has been evaluated yet")
        return None
    iteration = _last_evaluated(run)
    cost = evolution_cost(run)
    baseline = best_of(run, cost)
    exam_id = _exam_id(run, iteration, arms, baseline)
    stored = run.ledger.exam(exam_id)
    if stored is not None:
        return stored
    folder = EvalDir(run.paths.exam_dir(exam_id))
    runs = [_arm(run, a) for a in _runs(arms)]
    plan = folder.start(new_plan(exam_id, runs + ([baseline_arm(baseline, runs[0])]
                                                  if baseline else [])))
    reused = reuse_first_evaluation(run, folder, plan)
    tasks = len(run.heldout_ids)
    labels = [a.label for a in arms] + ([baseline.label] if baseline else [])
    say(f"exam {exam_id}: {', '.join(labels)} on {tasks} held-out "
        f"tasks, k={run.config.exam.k} ({sum(a.k for a in plan.arms) * tasks} rollouts, "
        f"{reused} of the seed's from iteration 0's evaluation; stored ones are not run again)")
    if baseline:
        say(f"  {baseline.label}: {baseline.picks} picks per task, each the model's choice among "
            f"{baseline.n} fresh attempts ({baseline.picks * baseline.n * tasks} rollouts)")
    run_plan(folder, plan, run_executor(run), progress)
    counts, spent = arm_counts(folder, plan), None
    if baseline:
        picks = run_picks(run, folder, plan, baseline, say)
        counts[baseline.name] = pick_counts(folder, plan, picks)
        spent = baseline_record(baseline, folder, plan, picks)
    record = _record(run, exam_id, iteration, arms, counts, arm_infra(folder, plan), spent, cost)
    record = record.model_copy(update={"reused_rollouts": reused})
    run.ledger.record_exam(record)
    return record


def reuse_first_evaluation(run: Run, folder: EvalDir, plan: EvalPlan) -> int:
    """Store iteration 0's held-out rollouts of the seed as the exam's seed arms' (the seed's
    attempts first, then the seed again's), so the exam does not pay twice for one measurement.
    They are fair draws: the seed is fixed before the run and no choice of the loop or the exam
    reads held-out results (the best iteration is chosen on train). Returns how many the folder
    holds from there; the exam runs the rest."""
    numbers = [n for n, arm in enumerate(plan.arms) if arm.name in (SEED, SEED_AGAIN)]
    seed = plan.arms[numbers[0]]
    found: dict[str, list[RolloutResult]] = {}
    for path in sorted(run.paths.rollouts(0).glob("*.json")):
        result = RolloutResult.model_validate_json(path.read_bytes())
        if (result.split == "heldout" and not result.trial_change and result.task_id in seed.tasks
                and run.repo.tree_id(result.harness_commit) == seed.tree):
            found.setdefault(result.task_id, []).append(result)
    reused = 0
    for task, results in found.items():
        results.sort(key=lambda r: r.attempt)
        for slot, result in enumerate(results[:len(numbers) * seed.k]):
            number, attempt = numbers[slot // seed.k], slot % seed.k
            target = folder.rollouts / f"{rollout_id(number, task, attempt)}.json"
            if not target.exists():
                write_model(target, result.model_copy(update=dict(
                    rollout_id=target.stem, run_id=plan.eval_id, iteration=number,
                    attempt=attempt)))
            reused += 1
    return reused


def _exam_arms(run: Run) -> list[ExamArm] | None:
    """Seed, final (the workspace head) and best (if another tree), in that order."""
    records = [r for r in run.ledger.phase_records() if r.phase == Phase.EVAL]
    if not records:
        return None
    repo = run.repo

    def arm(name: str, label: str, commit: str, iteration: int | None = None) -> ExamArm:
        sha = repo.commit_info(commit).sha
        return ExamArm(name=name, label=label, commit=sha, tree=repo.tree_id(sha),
                       iteration=iteration)

    seed, final = arm(SEED, "seed", "seed"), arm(FINAL, "final", repo.head())
    arms = [seed] + ([final] if final.tree != seed.tree else [])
    best_iteration = _best_iteration(run)
    evaluated = {r.iteration: r.harness_commit for r in records}
    if best_iteration in evaluated:
        best = arm(BEST, f"best (iteration {best_iteration})", evaluated[best_iteration],
                   best_iteration)
        if best.tree not in {a.tree for a in arms}:
            arms.append(best)
    return arms


def _runs(arms: list[ExamArm]) -> list[ExamArm]:
    """The arms to run: the seed twice (its second run is the noise floor's other side)."""
    seed = arms[0]
    return [seed, seed.model_copy(update={"name": SEED_AGAIN, "label": "seed again"}), *arms[1:]]


def _best_iteration(run: Run) -> int | None:
    """The evaluated iteration with the highest train pass rate (the latest among ties): chosen
    on train results only, so the held-out exam of it is not biased by the choice."""
    with run.ledger.reading() as store:
        rates = [(t.pass_rate_train, t.iteration) for t in iteration_totals(store.con, run.run_id)
                 if t.pass_rate_train is not None]
    return max(rates)[1] if rates else None


def _last_evaluated(run: Run) -> int:
    return max(r.iteration for r in run.ledger.phase_records() if r.phase == Phase.EVAL)


def _exam_id(run: Run, iteration: int, arms: list[ExamArm], baseline: BestOf | None) -> str:
    """Names exactly this exam: a new final harness, k, model or baseline is a new exam."""
    content = json.dumps([[a.name, a.tree] for a in arms] + [run.config.exam.k, run.config.model,
                                                              sorted(run.heldout_ids)]
                         + ([baseline.n, baseline.picks] if baseline else [])
                         + ([baseline.temperatures] if baseline and baseline.temperatures else []))
    return f"exam-it{iteration:03d}-{hashlib.sha256(content.encode()).hexdigest()[:8]}"


def _arm(run: Run, arm: ExamArm) -> Arm:
    return Arm(name=arm.name, label=arm.label, harness=f"{run.paths.root}@{arm.commit[:12]}",
               repo=run.paths.workspace, commit=arm.commit, tree=arm.tree,
               model=run.config.model, suite=run.suite.root, split=run.config.split,
               tasks=run.heldout_ids, k=run.config.exam.k)


def _record(run: Run, exam_id: str, iteration: int, arms: list[ExamArm],
            counts: dict[str, dict[str, TaskCounts]], infra: dict[str, InfraErrors],
            baseline: BestOfRecord | None, cost: EvolutionCost) -> ExamRecord:
    """The noise floor and the comparisons (both seed runs pooled), each at the Bonferroni level
    that keeps the family of comparisons at the configured confidence; a harness with a higher
    infra-error rate than the one it is compared with is worse (compare.py)."""
    family = run.config.exam.confidence
    pooled = {**counts, SEED: _pooled(counts[SEED], counts[SEED_AGAIN])}
    pooled_infra = {**infra, SEED: infra[SEED].plus(infra[SEED_AGAIN])}
    pairs = _compared(arms, baseline)
    level = bonferroni(family, len(pairs))
    note = None
    if all(a.name != FINAL for a in arms):
        note = "the final harness is the seed (no change was kept)"
    shown = _runs(arms)
    if baseline:
        shown.append(arms[0].model_copy(update={"name": baseline.name, "label": baseline.label}))
    return ExamRecord(
        run_id=run.run_id, exam_id=exam_id, iteration=iteration, finished_at=time.time(),
        model=run.config.model, k=run.config.exam.k, tasks=run.heldout_ids, arms=shown,
        confidence=family,
        noise_floor=compare(SEED, counts[SEED], SEED_AGAIN, counts[SEED_AGAIN],
                            confidence=level, a_infra=infra[SEED], b_infra=infra[SEED_AGAIN]),
        comparisons=[compare(a, pooled[a], b, pooled[b], confidence=level,
                             a_infra=pooled_infra[a], b_infra=pooled_infra[b]) for a, b in pairs],
        note=note, baseline=baseline, cost=cost)


def _compared(arms: list[ExamArm], baseline: BestOfRecord | None) -> list[tuple[str, str]]:
    """(A, B) of each comparison B - A: every evolved harness against the seed and the baseline,
    then the baseline against the seed."""
    against = [SEED] + ([baseline.name] if baseline else [])
    pairs = [(a, arm.name) for arm in arms[1:] for a in against]
    return pairs + ([(SEED, baseline.name)] if baseline else [])


def _pooled(first: dict[str, TaskCounts], second: dict[str, TaskCounts]) -> dict[str, TaskCounts]:
    return {task: first[task].plus(second[task]) if task in first and task in second
            else first.get(task) or second[task] for task in set(first) | set(second)}


def require_exam(record: ExamRecord | None, run: Run) -> ExamRecord:
    if record is None:
        raise EvoError("nothing to examine", file=run.paths.config, field="split",
                       hint="an exam needs held-out tasks and at least one evaluated iteration")
    return record
