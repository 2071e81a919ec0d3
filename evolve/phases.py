"""The seven phases of one iteration, each a function of (run, iteration) that is safe to run
again after a crash and returns its typed result: EVAL → INGEST → DISTILL → EVOLVE → COMMIT →
TRIAL → REVERT. Each connects stages; the records are the run ledger's, the order and stop rules
loop.py's, putting the workspace right before a phase recovery.py's, running a batch of rollouts
rollouts.py's, the trials' rounds trials.py's."""
from __future__ import annotations

import json
import time
from typing import TYPE_CHECKING

from evoharness.agent.clients import make_model
from evoharness.agent.events import ListSink
from evoharness.agent.exits import ExitReason
from evoharness.agent.model import Model
from evoharness.debugger.analyst import Analyst
from evoharness.debugger.distill import distill
from evoharness.errors import EvoError
from evoharness.files import read_inside, write_atomic
from evoharness.manifests.revert import apply_decisions
from evoharness.manifests.schema import IterationManifest
from evoharness.tasks.executor import HarnessTree, rollout_specs
from evoharness.tasks.runner import plan_rollouts

from .ledger.records import (CommitResult, DistillResult, EvalResult, EvolveResult, IngestResult,
                             RevertResult, TrialResult)
from .rollouts import ModelServerDown, Progress, run_batch
from .run import Run
from .trials import run_trials

if TYPE_CHECKING:
    from evoharness.evolve.agent.tools import LibraryOffer


def evaluate(run: Run, iteration: int, progress: Progress | None = None) -> EvalResult:
    """EVAL: k rollouts of every task (2k for a calibrated baseline) on the current harness.
    Stored rollouts are never run again; rollouts the model server could not serve are kept
    aside (not ingested) and the run stops, so a resume runs exactly those again."""
    attempts = run.config.k * (2 if iteration == 0 and run.config.calibration else 1)
    out_dir = run.paths.rollouts(iteration)
    done = run.ledger.stored_rollout_ids() | {p.stem for p in out_dir.glob("*.json")}
    specs = rollout_specs(plan_rollouts(run.items, attempts), run_id=run.run_id,
                          iteration=iteration, harness=HarnessTree.at(run.repo),
                          model=run.config.model, skip=done)
    paths = run_batch(run, specs, out_dir, progress)
    return EvalResult(rollouts_run=len(paths), attempts=attempts)


def ingest(run: Run, iteration: int) -> IngestResult:
    """INGEST: the iteration's trace files into DuckDB (idempotent; bad files quarantined)."""
    report = run.ledger.ingest(run.paths.rollouts(iteration))
    return IngestResult(**report.model_dump())


def distill_evidence(run: Run, iteration: int) -> DistillResult:
    """DISTILL: the layered evidence files for the evolve agent (train tasks only: validation and
    held-out ids are redacted wherever they would show), with the run's scoreboard, and the
    analyst's root causes when run.yaml asks for them."""
    analyst = Analyst(_model(run.config.evolve_model_spec)) if run.config.analyst else None
    with run.ledger.reading() as store:
        index = distill(
            store.con, run.run_id, iteration, run.paths.iteration_dir(iteration),
            hidden_tasks=set(run.unseen_ids), scoreboard=run.ledger.scoreboard().to_markdown(),
            forbidden=_test_file_lines(run), analyst=analyst,
        )
    return DistillResult(overview=str(index.overview), overview_chars=index.overview_chars,
                         tasks=len(index.tasks), rollouts=len(index.rollouts),
                         analyst_failed=index.analyst_failed)


def evolve_harness(run: Run, iteration: int) -> EvolveResult:
    """EVOLVE: the evolve agent edits the workspace (one commit per change) and its manifest is
    written before any trial rollout: the predictions are pre-registered."""
    from evoharness.evolve.agent import run_evolve_agent  # the evolve agent is the heaviest import

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
    """The improvement-library entries matching this iteration's failures (run.yaml library:,
    and the starter entries unless starter_library: false), less those the run applied already:
    a kept one is in the harness, a reverted one would cost a trial to learn nothing."""
    if run.config.library is None and not run.config.starter_library:
        return []
    from evoharness.evolve.agent.change import LIBRARY_TRAILER
    from evoharness.evolve.library.cue import offers

    applied = {run.repo.commit_info(c.entry.commit).trailers.get(LIBRARY_TRAILER)
               for c in run.ledger.changes()}
    with run.ledger.reading() as store:
        return offers(run.config.library, store.con, run.run_id, iteration,
                      starter=run.config.starter_library, exclude=applied - {None})


def commit_manifest(run: Run, iteration: int) -> CommitResult:
    """COMMIT: the pre-registered manifest into the store, and a tag on the harness it produced."""
    manifest = run.ledger.register(iteration, run.train_ids)
    run.repo.tag(f"iter-{iteration:03d}")
    return CommitResult(changes=len(manifest.changes))


def trial_changes(run: Run, iteration: int, progress: Progress | None = None) -> TrialResult:
    """TRIAL: judge each change this iteration's EVOLVE made in a trial of its own (base + the
    change alone against the base, paired on its predicted fixes, then the regression screen),
    and store each verdict as the change's judgement (trials.py)."""
    return run_trials(run, iteration, progress)


def revert_rejected(run: Run, iteration: int) -> RevertResult:
    """REVERT: one `git revert` per change its trial rejected (cascading through dependants);
    the next iteration evaluates the harness that is left."""
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


def _model(spec: str) -> Model:
    return make_model(spec)


TEST_FILE_BYTES = 64 << 20  # a hidden test's data file may be large; all of it is redacted


def _test_file_lines(run: Run) -> list[str]:
    """Lines of every task's hidden tests: the evidence must never quote them. Read without
    following links (a link's target is not the task's to give)."""
    lines = []
    for task, _ in run.items:
        for path in sorted(task.tests_dir.rglob("*")):
            if path.is_file() and not path.is_symlink():
                rel = path.relative_to(task.tests_dir).as_posix()
                try:
                    data = read_inside(task.tests_dir, rel, limit=TEST_FILE_BYTES)
                except EvoError:
                    continue  # through a linked folder (its target is not the task's)
                lines += [ln.strip() for ln in data.decode(errors="replace").splitlines()]
    return [ln for ln in lines if ln]
