"""The seven phases of one iteration, each a function of (run, iteration) that is safe to run
again after a crash and returns its typed result: EVAL → INGEST → ATTRIBUTE → REVERT → DISTILL →
EVOLVE → COMMIT. Each connects stages; the records are the run ledger's, the order and stop rules loop.py's,
putting the workspace right before a phase recovery.py's."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from agent.clients import make_model
from agent.events import ListSink
from agent.exits import ExitReason
from agent.model import Model
from debugger.analyst import Analyst
from debugger.distill import distill
from evoharness.errors import EvoError
from evoharness.files import write_atomic
from manifests.attribution import borderline_tasks
from manifests.judgement import judge_by_rule
from manifests.noise import counts_from_db, noise_from_db
from manifests.revert import apply_decisions
from manifests.schema import ChangeManifestEntry, IterationManifest
from tasks.executor import (
    Executor, HarnessTree, RolloutSpec, execute, make_executor, rollout_specs,
)
from tasks.results import RolloutResult
from tasks.runner import Planned, plan_rollouts

from .ledger import Phase
from .ledger.records import (AttributeResult, CommitResult, DistillResult, EvalResult,
                             EvolveResult, IngestResult, RevertResult)
from .placebo import is_placebo
from .run import Run

if TYPE_CHECKING:
    from evolve.agent.tools import LibraryOffer

Progress = Callable[[RolloutResult], None]


class ModelServerDown(EvoError):
    """The model server could not be reached: stop cleanly, resume later."""


def evaluate(run: Run, iteration: int, progress: Progress | None = None) -> EvalResult:
    """EVAL: k rollouts of every task (2k for a calibrated baseline) on the current harness.
    Stored rollouts are never run again; rollouts the model server could not serve are kept
    aside (not ingested) and the run stops, so a resume runs exactly those again."""
    attempts = run.config.k * (2 if iteration == 0 and run.config.calibration else 1)
    out_dir = run.paths.rollouts(iteration)
    done = run.ledger.stored_rollout_ids() | {p.stem for p in out_dir.glob("*.json")}
    unserved_ids: list[str] = []

    def seen(result: RolloutResult) -> None:
        if result.exit_reason == ExitReason.MODEL_UNAVAILABLE:
            unserved_ids.append(result.rollout_id)
        if progress is not None:
            progress(result)

    specs = _specs(run, iteration, plan_rollouts(run.items, attempts), skip=done)
    paths = execute(run_executor(run), specs, out_dir, progress=seen)
    unserved = set_aside(out_dir, run.paths.unserved(iteration), unserved_ids)
    if unserved:
        raise ModelServerDown(
            f"the model server did not answer in {len(unserved)} of {len(paths)} rollouts "
            f"(kept in {run.paths.unserved(iteration)})",
            field="model", value=run.config.model,
            hint=f"start the server, then `evoharness evolve {run.paths.root} --resume`; "
                 "stored rollouts are not run again",
        )
    return EvalResult(rollouts_run=len(paths), attempts=attempts)


def ingest(run: Run, iteration: int) -> IngestResult:
    """INGEST: the iteration's trace files into DuckDB (idempotent; bad files quarantined)."""
    report = run.ledger.ingest(run.paths.rollouts(iteration))
    return IngestResult(**report.model_dump())


def attribute_changes(run: Run, iteration: int) -> AttributeResult:
    """ATTRIBUTE: judge the previous iteration's changes on this evaluation (with a few targeted
    extra rollouts of borderline tasks) and record a judgement for each."""
    changes = _changes_of(run, iteration - 1)
    if not changes:
        return AttributeResult(changes=0)
    before_it = _before_iteration(run, iteration)
    before, noise, after = _counts(run, before_it, iteration)
    extra = borderline_tasks(changes, before, after, noise) if run.config.extra_rollouts else []
    if extra:
        _extra_rollouts(run, iteration, extra)
        _, _, after = _counts(run, before_it, iteration)
    placebos = [c.id for c in changes if is_placebo(run.repo, c.commit)]
    # The verdict itself ignores the placebo label (so placebos measure the false-accept rate
    # honestly); the report reads it from the judgement.
    judgements = [j.model_copy(update={"placebo": j.change_id in placebos}) for j in judge_by_rule(
        changes, before, after, noise, run_id=run.run_id, iteration=iteration,
        before_iteration=before_it, extra_rollouts={t: run.config.extra_rollouts for t in extra})]
    run.ledger.record_judgements(judgements)
    return AttributeResult(changes=len(changes), before_iteration=before_it, borderline=extra,
                           placebos=placebos,
                           decisions={j.change_id: j.decision for j in judgements})


def revert_rejected(run: Run, iteration: int) -> RevertResult:
    """REVERT: one `git revert` per rejected change (cascading through dependants)."""
    judged = run.ledger.judgements()
    reverted = run.ledger.reverts()
    rejected = [j for j in judged.values() if j.iteration == iteration
                and j.decision == "revert" and j.change_id not in reverted]
    if not rejected:
        return RevertResult()
    every_change = [r.entry for r in run.ledger.changes()]
    records = apply_decisions(run.repo, rejected, every_change)
    run.ledger.record_reverts(iteration, records)
    return RevertResult(reverted=[r.change_id for r in records])


def distill_evidence(run: Run, iteration: int) -> DistillResult:
    """DISTILL: the layered evidence files for the evolve agent (train tasks only), with the run's
    scoreboard, and the analyst's root causes when run.yaml asks for them."""
    analyst = Analyst(_model(run.config.evolve_model_spec)) if run.config.analyst else None
    with run.ledger.reading() as store:
        index = distill(
            store.con, run.run_id, iteration, run.paths.iteration_dir(iteration),
            hidden_tasks=set(run.heldout_ids), scoreboard=run.ledger.scoreboard().to_markdown(),
            forbidden=_test_file_lines(run), analyst=analyst,
        )
    return DistillResult(overview=str(index.overview), overview_chars=index.overview_chars,
                         tasks=len(index.tasks), rollouts=len(index.rollouts),
                         analyst_failed=index.analyst_failed)


def evolve_harness(run: Run, iteration: int) -> EvolveResult:
    """EVOLVE: the evolve agent edits the workspace (one commit per change) and its manifest is
    written before the next evaluation: the predictions are pre-registered."""
    from evolve.agent import run_evolve_agent  # the evolve agent is the heaviest import

    registered = run.ledger.manifest(iteration, run.train_ids)
    if registered is not None:
        # The session finished and pre-registered its predictions before a crash: running it
        # again would change them. recovery.py has put the workspace back at its last commit.
        return EvolveResult(changes=len(registered.changes), resumed=True,
                            no_change_reason=registered.no_change_reason)
    start = run.repo.head()
    sink = ListSink()
    offered = _library_offers(run, iteration)
    outcome = run_evolve_agent(
        repo=run.repo, model=_model(run.config.evolve_model_spec),
        evidence_dir=run.paths.evidence(iteration), db_path=run.paths.db,
        run_id=run.run_id, iteration=iteration, train_tasks=run.train_ids,
        max_changes=run.config.max_changes, max_steps=run.config.evolve_max_steps, sink=sink,
        scoreboard_md=run.ledger.scoreboard().to_markdown(), forbidden=_test_file_lines(run),
        library=offered, tried=run.ledger.changes(),
    )
    write_atomic(run.paths.evolve_trace(iteration),
                 json.dumps([e.model_dump(mode="json") for e in sink.events]))
    if outcome.exit_reason == ExitReason.MODEL_UNAVAILABLE and not outcome.manifest_changes:
        run.repo.reset_hard(start)
        raise ModelServerDown("the evolve agent's model server did not answer",
                              field="evolve_model", value=run.config.evolve_model_spec,
                              hint=f"start it, then `evoharness evolve {run.paths.root} --resume`")
    manifest = IterationManifest(
        run_id=run.run_id, iteration=iteration, created_at=time.time(),
        harness_commit_before=start, changes=outcome.manifest_changes,
        no_change_reason=outcome.no_change_reason if not outcome.manifest_changes else None,
    )
    run.ledger.preregister(manifest)
    return EvolveResult(changes=len(manifest.changes), no_change_reason=manifest.no_change_reason,
                        tokens=outcome.tokens_in + outcome.tokens_out, steps=outcome.steps,
                        exit_reason=outcome.exit_reason, specific=outcome.specific)


def _library_offers(run: Run, iteration: int) -> list[LibraryOffer]:
    """The improvement-library entries matching this iteration's failures (run.yaml library:)."""
    if run.config.library is None:
        return []
    from evolve.library.cue import offers

    with run.ledger.reading() as store:
        return offers(run.config.library, store.con, run.run_id, iteration)


def commit_manifest(run: Run, iteration: int) -> CommitResult:
    """COMMIT: the pre-registered manifest into the store, and a tag on the harness it produced."""
    manifest = run.ledger.register(iteration, run.train_ids)
    run.repo.tag(f"iter-{iteration:03d}")
    return CommitResult(changes=len(manifest.changes))


def _model(spec: str) -> Model:
    return make_model(spec)


def run_executor(run: Run) -> Executor:
    config = run.config
    return make_executor(config.executor, workers=config.workers,
                         rollout_timeout=config.rollout_timeout,
                         unsafe_no_sandbox=config.unsafe_no_sandbox, ray_address=config.ray_address)


def _specs(run: Run, iteration: int, plan: list[Planned], skip: set[str]) -> list[RolloutSpec]:
    """The rollouts of `plan` on the workspace's current harness, less those in `skip`."""
    return rollout_specs(plan, run_id=run.run_id, iteration=iteration,
                         harness=HarnessTree.at(run.repo), model=run.config.model, skip=skip)


def set_aside(out_dir: Path, aside: Path, rollout_ids: list[str]) -> list[Path]:
    """Move rollouts out of the ingest folder into `aside` so a resume runs them again."""
    moved = []
    for rollout in rollout_ids:
        target = aside / f"{rollout}.{int(time.time() * 1000)}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{rollout}.json").rename(target)
        moved.append(target)
    return moved


def _changes_of(run: Run, iteration: int) -> list[ChangeManifestEntry]:
    manifest = run.ledger.manifest(iteration, run.train_ids) if iteration >= 0 else None
    return manifest.changes if manifest else []


def _counts(run: Run, before_it: int, after_it: int):
    """Train-task pass counts of the two evaluations, and the noise model up to the first."""
    with run.ledger.reading() as store:
        return (counts_from_db(store.con, run.run_id, before_it),
                noise_from_db(store.con, run.run_id, run.config.k, before_it),
                counts_from_db(store.con, run.run_id, after_it))


def _before_iteration(run: Run, iteration: int) -> int:
    """The evaluation of the harness the changes were made on: the latest earlier evaluation whose
    tree equals the tree the evolve agent started from (after the reverts), else the previous one."""
    started = run.ledger.phase(iteration - 1, Phase.REVERT)
    if started is not None:
        tree = run.repo.tree_id(started.harness_commit)
        evaluated = [r for r in run.ledger.phase_records()
                     if r.phase == Phase.EVAL and r.iteration < iteration]
        for record in reversed(evaluated):
            if run.repo.tree_id(record.harness_commit) == tree:
                return record.iteration
    return iteration - 1


def _extra_rollouts(run: Run, iteration: int, task_ids: list[str]) -> None:
    """A few more rollouts of borderline tasks only, numbered after the evaluation's attempts."""
    evaluated = run.ledger.phase(iteration, Phase.EVAL)
    first = evaluated.result.attempts
    tasks = {t.id: (t, s) for t, s in run.items}
    plan = [(*tasks[t], first + n) for t in task_ids for n in range(run.config.extra_rollouts)]
    out_dir = run.paths.rollouts(iteration)
    done = {p.stem for p in out_dir.glob("*.json")}
    # ATTRIBUTE runs before REVERT, so the workspace is still the harness this iteration evaluated.
    execute(run_executor(run), _specs(run, iteration, plan, skip=done), out_dir)
    run.ledger.ingest(out_dir)


def _test_file_lines(run: Run) -> list[str]:
    """Lines of every task's hidden tests: the evidence must never quote them."""
    lines = []
    for task, _ in run.items:
        for path in sorted(task.tests_dir.rglob("*")):
            if path.is_file():
                lines += [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    return [ln for ln in lines if ln]
