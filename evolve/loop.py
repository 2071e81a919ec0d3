"""The iteration loop: runs each iteration's phases in order, records each as done in the run
ledger so a killed run resumes after the last finished phase, and enforces the stop rules in code.
What each phase does is phases.py's; the phase list is the ledger's Phase. An iteration evaluates
the head, evolves it, judges each change in its own trial and reverts the rejected ones, so the
next iteration's evaluation is of the harness that survived. At the iteration limit a harness an
earlier iteration evaluated (every change since was reverted) is not evaluated again: that
evaluation would feed no evolve session, and the exam judges the final harness."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from evoharness.errors import EvoError
from evoharness.tasks.results import RolloutResult
from evoharness.traces.queries import iteration_totals

from . import forecast, phases
from .config import save_config, validate_config
from .evaluate.exam import examine
from .ledger import EVALUATE, EVOLVE, PHASE_ORDER, Phase
from .ledger.records import EvolveResult, ExamRecord, PhaseResult
from .recovery import prepare_workspace
from .run import Run, open_run

_STEPS: dict[Phase, Callable[[Run, int], PhaseResult]] = {
    Phase.INGEST: phases.ingest,
    Phase.DISTILL: phases.distill_evidence,
    Phase.EVOLVE: phases.evolve_harness,
    Phase.COMMIT: phases.commit_manifest,
    Phase.REVERT: phases.revert_rejected,
}
# The phases that run rollouts, and show each as it finishes.
_ROLLING: dict[Phase, Callable[[Run, int, Callable[[RolloutResult], None] | None], PhaseResult]] = {
    Phase.EVAL: phases.evaluate,
    Phase.TRIAL: phases.trial_changes,
}

Say = Callable[[str], None]


class LoopResult(BaseModel):
    last_iteration: int
    stop_reason: str
    exam_id: str | None = None  # the final exam run at the stop, if any


def run_phases(run: Run, iteration: int, names: tuple[Phase, ...], say: Say,
               on_rollout: Callable[[RolloutResult], None] | None = None) -> None:
    """Run the phases of `names` this iteration has not finished, recording each when done."""
    done = run.ledger.phases_done(iteration)
    for name in names:
        if name in done:
            continue
        prepare_workspace(run, iteration, name, say)
        say(f"iteration {iteration}: {name}")
        started = time.monotonic()
        if name in _ROLLING:
            result = _ROLLING[name](run, iteration, on_rollout)
        else:
            result = _STEPS[name](run, iteration)
        run.ledger.record_phase(iteration, name, result, harness_commit=run.repo.head(),
                                seconds=time.monotonic() - started)
        if name in (Phase.INGEST, Phase.EVOLVE):  # this machine's pace, for the next forecast
            forecast.remember(run.ledger, run.config)


def evaluate_once(run_dir: str | Path, say: Say,
                  on_rollout: Callable[[RolloutResult], None] | None = None,
                  overrides: dict | None = None) -> int:
    """`evoharness run`: evaluate the current harness (EVAL, INGEST, DISTILL). Returns the
    iteration evaluated."""
    with open_run(run_dir, command="run", say=say) as run:
        _override(run, overrides)
        iteration, done = run.ledger.position()
        if Phase.DISTILL in done:
            say(f"iteration {iteration} is already evaluated; `evoharness evolve` continues it")
            return iteration
        run_phases(run, iteration, EVALUATE, say, on_rollout)
        return iteration


def evolve(run_dir: str | Path, *, iterations: int | None, resume: bool, say: Say,
           on_rollout: Callable[[RolloutResult], None] | None = None,
           overrides: dict | None = None, examine: bool = False) -> LoopResult:
    """`evoharness evolve`: iterate until a stop rule says so; then, with `examine` and run.yaml's
    `exam.on_stop`, the final exam (evolve/evaluate/exam.py), which a resume finishes if it was killed."""
    with open_run(run_dir, command="evolve", say=say) as run:
        _override(run, overrides)
        if iterations is not None and iterations != run.config.stop.iterations:
            # A stop rule belongs to the run: saved, so `--resume`, `status` and the forecast
            # keep it (the executor options above hold for this process only).
            run.config.stop.iterations = iterations
            save_config(run.paths, run.config)
            say(f"stop rule: {iterations} iteration(s), saved to {run.paths.config}")
        iteration, done = run.ledger.position()
        interrupted = bool(done) and done != set(EVALUATE)  # a clean stop is after DISTILL
        if interrupted and not resume:
            phase = next(p for p in reversed(PHASE_ORDER) if p in done)
            raise EvoError(f"iteration {iteration} stopped after {phase}", file=run.paths.root,
                           hint=f"continue it with `evoharness evolve {run_dir} --resume`")
        if done:
            say(f"resuming iteration {iteration} after {sorted(done, key=PHASE_ORDER.index)[-1]}")
        while True:
            same = evaluated_as(run, iteration)
            if same is None:
                run_phases(run, iteration, EVALUATE, say, on_rollout)
                reason = stop_reason(run, iteration)
            else:
                reason = (f"{run.config.stop.iterations} iteration(s) done; the harness left is "
                          f"iteration {same}'s, not evaluated again")
            if reason:
                say(run.ledger.record_stop(iteration, reason).line())
                exam = final_exam(run, say, on_rollout) if examine else None
                return LoopResult(last_iteration=iteration, stop_reason=reason,
                                  exam_id=exam and exam.exam_id)
            run_phases(run, iteration, EVOLVE, say, on_rollout)
            iteration += 1


def evaluated_as(run: Run, iteration: int) -> int | None:
    """At the iteration limit, before `iteration` has begun: the earlier iteration whose
    evaluated harness has the head's tree, if one has (None otherwise, and below the limit)."""
    if iteration < run.config.stop.iterations or run.ledger.phases_done(iteration):
        return None
    head = run.repo.tree_id()
    return next((r.iteration for r in run.ledger.phase_records()
                 if r.phase == Phase.EVAL and run.repo.tree_id(r.harness_commit) == head), None)


def final_exam(run: Run, say: Say, on_rollout: Callable[[RolloutResult], None] | None
               ) -> ExamRecord | None:
    """The exam at a stop, when run.yaml asks for it; its verdict line is said."""
    if not run.config.exam.on_stop:
        return None
    record = examine(run, say, on_rollout)
    if record is not None:
        say(record.verdict_line())
    return record


def _override(run: Run, overrides: dict | None) -> None:
    """Settings for this process only (the CLI's --executor), validated like run.yaml."""
    if overrides:
        run.config = validate_config(run.config.model_dump() | overrides, run.paths.config)


def stop_reason(run: Run, iteration: int) -> str | None:
    """The first stop rule that holds after `iteration`'s evaluation, or None to go on. Budgets
    count the work of earlier (killed or stopped) processes too: they are read from the records."""
    rules = run.config.stop
    with run.ledger.reading() as store:
        totals = iteration_totals(store.con, run.run_id)
    rates = [t.pass_rate_train or 0.0 for t in totals]
    records = run.ledger.phase_records()
    if iteration >= rules.iterations:
        return f"{rules.iterations} iteration(s) done"
    if rules.target_pass_rate is not None and rates and rates[-1] >= rules.target_pass_rate:
        return f"train pass rate {rates[-1]:.0%} reached the target {rules.target_pass_rate:.0%}"
    if rules.patience is not None and rates:
        best = max(range(len(rates)), key=lambda i: (rates[i], -i))
        if len(rates) - 1 - best >= rules.patience:
            return f"no improvement for {rules.patience} iteration(s)"
    if rules.tokens is not None:
        evolve_tokens = sum(r.result.tokens for r in records if isinstance(r.result, EvolveResult))
        used = sum(t.tokens_in + t.tokens_out for t in totals) + evolve_tokens
        if used >= rules.tokens:
            return f"token budget spent ({used:,} of {rules.tokens:,})"
    if rules.wall_seconds is not None and sum(r.seconds for r in records) >= rules.wall_seconds:
        return f"wall-time budget of {rules.wall_seconds:.0f}s spent"
    return None
