"""The iteration loop: runs each iteration's phases in order, records each as done in DuckDB so a
killed run resumes after the last finished phase, and enforces the stop rules in code.
What each phase does is phases.py's."""
from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel

from evoharness.errors import EvoError
from tasks.results import RolloutResult
from traces.queries import iteration_totals

from . import phases
from .config import validate_config
from .run import Run, open_run

EVALUATE = ("EVAL", "INGEST", "ATTRIBUTE", "REVERT", "DISTILL")
EVOLVE = ("EVOLVE", "COMMIT")
PHASE_ORDER = EVALUATE + EVOLVE
_STEPS: dict[str, Callable[[Run, int], dict]] = {
    "INGEST": phases.ingest,
    "ATTRIBUTE": phases.attribute_changes,
    "REVERT": phases.revert_rejected,
    "DISTILL": phases.distill_evidence,
    "EVOLVE": phases.evolve_harness,
    "COMMIT": phases.commit_manifest,
}

Say = Callable[[str], None]


class LoopResult(BaseModel):
    last_iteration: int
    stop_reason: str


def position(run: Run) -> tuple[int, set[str]]:
    """The iteration to work on and the phases it has finished."""
    last = run.store.last_phase(run.run_id)
    if last is None:
        return 0, set()
    iteration, phase = last
    if phase == PHASE_ORDER[-1]:
        return iteration + 1, set()
    return iteration, run.store.phases_done(run.run_id, iteration)


def run_phases(run: Run, iteration: int, names: tuple[str, ...], say: Say,
               on_rollout: Callable[[RolloutResult], None] | None = None) -> None:
    """Run the phases of `names` this iteration has not finished, marking each when done."""
    done = run.store.phases_done(run.run_id, iteration)
    for name in names:
        if name in done:
            continue
        _prepare_workspace(run, iteration, name, say)
        say(f"iteration {iteration}: {name}")
        started = time.monotonic()
        if name == "EVAL":
            detail = phases.evaluate(run, iteration, on_rollout)
        else:
            detail = _STEPS[name](run, iteration)
        detail["seconds"] = round(time.monotonic() - started, 2)
        run.store.mark_phase(run.run_id, iteration, name, harness_commit=run.repo.head(),
                             detail=detail)


def evaluate_once(run_dir: str | Path, say: Say,
                  on_rollout: Callable[[RolloutResult], None] | None = None,
                  overrides: dict | None = None) -> int:
    """`evoharness run`: evaluate the current harness (EVAL, INGEST, DISTILL, with ATTRIBUTE and
    REVERT when earlier changes await judgement). Returns the iteration evaluated."""
    with open_run(run_dir) as run:
        _override(run, overrides)
        iteration, done = position(run)
        if "DISTILL" in done:
            say(f"iteration {iteration} is already evaluated; `evoharness evolve` continues it")
            return iteration
        run_phases(run, iteration, EVALUATE, say, on_rollout)
        return iteration


def evolve(run_dir: str | Path, *, iterations: int | None, resume: bool, say: Say,
           on_rollout: Callable[[RolloutResult], None] | None = None,
           overrides: dict | None = None) -> LoopResult:
    """`evoharness evolve`: iterate until a stop rule says so."""
    with open_run(run_dir) as run:
        _override(run, overrides)
        if iterations is not None:
            run.config.stop.iterations = iterations
        iteration, done = position(run)
        interrupted = bool(done) and done != set(EVALUATE)  # a clean stop is after DISTILL
        if interrupted and not resume:
            phase = next(p for p in reversed(PHASE_ORDER) if p in done)
            raise EvoError(f"iteration {iteration} stopped after {phase}", file=run.paths.root,
                           hint=f"continue it with `evoharness evolve {run_dir} --resume`")
        if done:
            say(f"resuming iteration {iteration} after {sorted(done, key=PHASE_ORDER.index)[-1]}")
        while True:
            run_phases(run, iteration, EVALUATE, say, on_rollout)
            reason = stop_reason(run, iteration)
            if reason:
                say(f"stopped after iteration {iteration}: {reason}")
                return LoopResult(last_iteration=iteration, stop_reason=reason)
            run_phases(run, iteration, EVOLVE, say, on_rollout)
            iteration += 1


def _override(run: Run, overrides: dict | None) -> None:
    """Settings for this process only (the CLI's --executor), validated like run.yaml."""
    if overrides:
        run.config = validate_config(run.config.model_dump() | overrides, run.paths.config)


def stop_reason(run: Run, iteration: int) -> str | None:
    """The first stop rule that holds after `iteration`'s evaluation, or None to go on."""
    rules = run.config.stop
    totals = iteration_totals(run.store.con, run.run_id)
    rates = [t.pass_rate_train or 0.0 for t in totals]
    if iteration >= rules.iterations:
        return f"{rules.iterations} iteration(s) done"
    if rules.target_pass_rate is not None and rates and rates[-1] >= rules.target_pass_rate:
        return f"train pass rate {rates[-1]:.0%} reached the target {rules.target_pass_rate:.0%}"
    if rules.patience is not None and rates:
        best = max(range(len(rates)), key=lambda i: (rates[i], -i))
        if len(rates) - 1 - best >= rules.patience:
            return f"no improvement for {rules.patience} iteration(s)"
    if rules.tokens is not None:
        used = sum(t.tokens_in + t.tokens_out for t in totals) + int(_detail_sum(run, "tokens"))
        if used >= rules.tokens:
            return f"token budget spent ({used:,} of {rules.tokens:,})"
    if rules.wall_seconds is not None and _detail_sum(run, "seconds") >= rules.wall_seconds:
        return f"wall-time budget of {rules.wall_seconds:.0f}s spent"
    return None


def _detail_sum(run: Run, key: str) -> float:
    """A number summed over every finished phase's detail: from DuckDB, so a budget counts the
    work of earlier (killed or stopped) processes too. Only EVOLVE's detail has `tokens`."""
    row = run.store.con.execute(
        f"SELECT coalesce(sum(CAST(json_extract(detail, '$.{key}') AS DOUBLE)), 0) "
        "FROM iterations WHERE run_id = ?", [run.run_id]).fetchone()
    return float(row[0])


def _prepare_workspace(run: Run, iteration: int, phase: str, say: Say) -> None:
    """Before EVAL and REVERT (a revert killed before its commit leaves a dirty tree) keep any
    stray edits aside; before EVOLVE also drop the commits of an evolve agent that was killed
    before it registered its manifest, going back to the harness the REVERT phase left (or
    forward to the registered manifest's last commit)."""
    if phase in ("EVAL", "REVERT"):
        target = run.repo.head()
    elif phase == "EVOLVE":
        registered = phases.registered_manifest(run, iteration)
        target = phases.evolved_head(registered) if registered else run.store.con.execute(
            "SELECT harness_commit FROM iterations WHERE run_id = ? AND iteration = ? "
            "AND phase = 'DISTILL'", [run.run_id, iteration]).fetchone()[0]
    else:
        return
    kept = phases.recover_workspace(run, target)
    if kept:
        say(f"uncommitted workspace edits kept on branch {kept}")
