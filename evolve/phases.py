"""The seven phases of one iteration, each a function of (run, iteration) that is safe to run again
after a crash: EVAL → INGEST → ATTRIBUTE → REVERT → DISTILL → EVOLVE → COMMIT. The order, the
phase bookkeeping and the stop rules are loop.py's."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent.clients import make_model
from agent.events import ListSink
from agent.model import Model
from debugger.distill import distill
from debugger.scoreboard import ChangeOutcome, Scoreboard
from evoharness.errors import EvoError
from evoharness.files import write_atomic
from manifests.attribution import Verdict, attribute, borderline_tasks, record_verdicts
from manifests.noise import counts_from_db, noise_from_db
from manifests.revert import apply_decisions, record_reverts
from manifests.schema import ChangeManifestEntry, IterationManifest
from manifests.store import load_manifest, load_run_manifests, manifest_path, save_manifest
from tasks.results import RolloutResult
from tasks.runner import run_rollouts
from tasks.unsafe import require_sandbox
from workspace.validate import load_harness

from .placebo import is_placebo
from .run import Run

Detail = dict[str, Any]
Progress = Callable[[RolloutResult], None]


class ModelServerDown(EvoError):
    """The model server could not be reached: stop cleanly, resume later."""


def evaluate(run: Run, iteration: int, progress: Progress | None = None) -> Detail:
    """EVAL: k rollouts of every task (2k for a calibrated baseline) on the current harness.
    Stored rollouts are never run again; rollouts the model server could not serve are kept
    aside (not ingested) and the run stops, so a resume runs exactly those again."""
    harness = load_harness(run.repo.path)
    attempts = run.config.k * (2 if iteration == 0 and run.config.calibration else 1)
    out_dir = run.paths.rollouts(iteration)
    done = run.store.stored_rollout_ids(run.run_id) | {p.stem for p in out_dir.glob("*.json")}
    unserved_ids: list[str] = []

    def seen(result: RolloutResult) -> None:
        if result.exit_reason == "model_unavailable":
            unserved_ids.append(result.rollout_id)
        if progress is not None:
            progress(result)

    paths = run_rollouts(
        harness, run.repo.head(), run.items, _model(run.config.model, run.config.workers),
        run_id=run.run_id, iteration=iteration, out_dir=out_dir, attempts=attempts,
        workers=run.config.workers,
        rollout_timeout=run.config.rollout_timeout, skip=done,
        sandbox_factory=_sandbox_factory(run), progress=seen,
    )
    unserved = _set_aside(out_dir, unserved_ids)
    if unserved:
        raise ModelServerDown(
            f"the model server did not answer in {len(unserved)} of {len(paths)} rollouts "
            f"(kept in {out_dir / 'unserved'})",
            field="model", value=run.config.model,
            hint=f"start the server, then `evoharness evolve {run.paths.root} --resume`; "
                 "stored rollouts are not run again",
        )
    return {"rollouts_run": len(paths), "attempts": attempts}


def ingest(run: Run, iteration: int) -> Detail:
    """INGEST: the iteration's trace files into DuckDB (idempotent; bad files quarantined)."""
    report = run.store.ingest_dir(run.paths.rollouts(iteration))
    return report.model_dump(mode="json")


def attribute_changes(run: Run, iteration: int) -> Detail:
    """ATTRIBUTE: judge the previous iteration's changes on this evaluation (with a few targeted
    extra rollouts of borderline tasks) and record a verdict for each."""
    changes = _changes_of(run, iteration - 1)
    if not changes:
        return {"changes": 0}
    con, k = run.store.con, run.config.k
    before_it = _before_iteration(run, iteration)
    before = counts_from_db(con, run.run_id, before_it)
    noise = noise_from_db(con, run.run_id, k, before_it)
    after = counts_from_db(con, run.run_id, iteration)
    extra = borderline_tasks(changes, before, after, noise) if run.config.extra_rollouts else []
    if extra:
        _extra_rollouts(run, iteration, extra)
        after = counts_from_db(con, run.run_id, iteration)
    verdicts = attribute(changes, before, after, noise)
    record_verdicts(con, run.run_id, iteration, verdicts)
    placebos = [c.id for c in changes if is_placebo(run.repo, c.commit)]
    # The verdict itself ignores this label (so placebos measure the false-accept rate honestly);
    # the report reads it from the verdict's detail.
    for change_id in placebos:
        con.execute("UPDATE verdicts SET detail = json_merge_patch(detail, '{\"placebo\": true}') "
                    "WHERE change_id = ?", [change_id])
    return {"changes": len(changes), "before_iteration": before_it, "borderline": extra,
            "noise_band": noise.band(), "placebos": placebos,
            "decisions": {v.change_id: v.decision for v in verdicts}}


def revert_rejected(run: Run, iteration: int) -> Detail:
    """REVERT: one `git revert` per rejected change (cascading through dependants)."""
    rows = run.store.con.execute(
        "SELECT change_id, detail FROM verdicts WHERE run_id = ? AND iteration = ? "
        "AND decision = 'revert' AND revert_commit IS NULL", [run.run_id, iteration]).fetchall()
    if not rows:
        return {"reverted": []}
    verdicts = [Verdict.model_validate_json(detail) for _, detail in rows]
    every_change = [c for m in load_run_manifests(run.paths.root) for c in m.changes]
    records = apply_decisions(run.repo, verdicts, every_change)
    record_reverts(run.store.con, run.run_id, iteration, records)
    return {"reverted": [r.change_id for r in records]}


def distill_evidence(run: Run, iteration: int) -> Detail:
    """DISTILL: the layered evidence files for the evolve agent (train tasks only)."""
    index = distill(
        run.store.con, run.run_id, iteration, run.paths.iteration_dir(iteration),
        hidden_tasks=set(run.heldout_ids), scoreboard=scoreboard(run, iteration),
        forbidden=_test_file_lines(run),
    )
    return {"overview": str(index.overview), "overview_chars": index.overview_chars,
            "tasks": len(index.tasks), "rollouts": len(index.rollouts)}


def evolve_harness(run: Run, iteration: int) -> Detail:
    """EVOLVE: the evolve agent edits the workspace (one commit per change) and its manifest is
    written before the next evaluation: the predictions are pre-registered."""
    from evolve.agent import run_evolve_agent  # the evolve agent is the heaviest import

    registered = registered_manifest(run, iteration)
    if registered is not None:
        # The session finished and pre-registered its predictions before a crash: running it
        # again would change them. loop.py has put the workspace back at its last commit.
        return {"changes": len(registered.changes),
                "no_change_reason": registered.no_change_reason, "resumed": True}
    start = run.repo.head()
    sink = ListSink()
    outcome = run_evolve_agent(
        repo=run.repo, model=_model(run.config.evolve_model_spec),
        evidence_dir=run.paths.evidence(iteration), db_path=run.paths.db, store=run.store,
        run_id=run.run_id, iteration=iteration, train_tasks=run.train_ids,
        max_changes=run.config.max_changes, max_steps=run.config.evolve_max_steps, sink=sink,
        scoreboard_md=_scoreboard_markdown(run, iteration),
    )
    write_atomic(run.paths.iteration_dir(iteration) / "evolve_trace.json",
                 json.dumps([e.model_dump(mode="json") for e in sink.events]))
    if outcome.exit_reason == "model_unavailable" and not outcome.manifest_changes:
        run.repo.reset_hard(start)
        raise ModelServerDown("the evolve agent's model server did not answer",
                              field="evolve_model", value=run.config.evolve_model_spec,
                              hint=f"start it, then `evoharness evolve {run.paths.root} --resume`")
    manifest = IterationManifest(
        run_id=run.run_id, iteration=iteration, created_at=time.time(),
        harness_commit_before=start, changes=outcome.manifest_changes,
        no_change_reason=outcome.no_change_reason if not outcome.manifest_changes else None,
    )
    save_manifest(run.paths.root, manifest)
    return {"changes": len(manifest.changes), "no_change_reason": manifest.no_change_reason,
            "tokens": outcome.tokens_in + outcome.tokens_out, "steps": outcome.steps,
            "exit_reason": outcome.exit_reason, "specific": outcome.specific}


def registered_manifest(run: Run, iteration: int) -> IterationManifest | None:
    """The iteration's pre-registered manifest, if EVOLVE has written it."""
    path = manifest_path(run.paths.root, iteration)
    return load_manifest(path, run.train_ids) if path.exists() else None


def evolved_head(manifest: IterationManifest) -> str:
    """The harness an EVOLVE session left: its last change's commit (each builds on the last)."""
    return manifest.changes[-1].commit if manifest.changes else manifest.harness_commit_before


def commit_manifest(run: Run, iteration: int) -> Detail:
    """COMMIT: the pre-registered manifest into DuckDB, and a tag on the harness it produced."""
    manifest = load_manifest(manifest_path(run.paths.root, iteration), run.train_ids)
    save_manifest(run.paths.root, manifest, run.store.con)
    run.repo.tag(f"iter-{iteration:03d}")
    return {"changes": len(manifest.changes)}


def recover_workspace(run: Run, commit: str) -> str | None:
    """Put the workspace back at `commit` before a phase is redone. Uncommitted edits (a killed
    evolve agent, a hand edit) are committed to a recovery branch first, never thrown away."""
    branch = f"recovered/{time.strftime('%Y%m%d-%H%M%S')}"
    kept = run.repo.save_uncommitted(branch)
    if kept or run.repo.head() != commit:
        run.repo.reset_hard(commit)
    return branch if kept else None


def scoreboard(run: Run, iteration: int) -> Scoreboard | None:
    """What the previous iteration's changes did, as the evidence overview shows it."""
    rows = run.store.con.execute(
        "SELECT c.manifest, v.verdict, v.decision, v.detail FROM changes c JOIN verdicts v "
        "USING (change_id) WHERE c.run_id = ? AND c.iteration = ?",
        [run.run_id, iteration - 1]).fetchall()
    if not rows:
        return None
    outcomes = []
    for manifest, verdict, decision, detail in rows:
        entry = ChangeManifestEntry.model_validate_json(manifest)
        judged = json.loads(detail)
        outcomes.append(ChangeOutcome(
            change_id=entry.id, component=entry.component, summary=entry.targeted_fix[:200],
            verdict=verdict, decision=decision,
            predicted_fixes=[p.task_id for p in entry.predicted_fixes],
            confirmed_fixes=judged.get("confirmed_fixes", []),
            regressions=judged.get("predicted_regressions_observed", [])
            + judged.get("unpredicted_regressions", []),
        ))
    return Scoreboard(changes=outcomes)


def _scoreboard_markdown(run: Run, iteration: int) -> str:
    """Every judged change of the run so far, so the evolve agent learns what gets reverted."""
    rows = run.store.con.execute(
        "SELECT c.iteration, c.change_id, c.component, v.verdict, v.decision, "
        "json_extract_string(v.detail, '$.reason') FROM changes c JOIN verdicts v USING (change_id)"
        " WHERE c.run_id = ? ORDER BY c.iteration, c.change_id", [run.run_id]).fetchall()
    if not rows:
        return "No change has been judged yet."
    lines = ["| iteration | change | component | verdict | decision | why |", "|---|---|---|---|---|---|"]
    lines += [f"| {it} | {cid} | {comp} | {verdict} | {decision} | {why or ''} |"
              for it, cid, comp, verdict, decision, why in rows]
    return "\n".join(lines)


def _model(spec: str, workers: int = 1) -> Model:
    return make_model(spec, workers=workers)


def _sandbox_factory(run: Run):
    return require_sandbox(run.config.unsafe_no_sandbox)


def _set_aside(out_dir: Path, rollout_ids: list[str]) -> list[Path]:
    """Move rollouts out of the ingest folder (kept, never deleted) so a resume runs them again."""
    moved = []
    for rollout in rollout_ids:
        target = out_dir / "unserved" / f"{rollout}.{int(time.time() * 1000)}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{rollout}.json").rename(target)
        moved.append(target)
    return moved


def _changes_of(run: Run, iteration: int) -> list[ChangeManifestEntry]:
    manifest = registered_manifest(run, iteration) if iteration >= 0 else None
    return manifest.changes if manifest else []


def _before_iteration(run: Run, iteration: int) -> int:
    """The evaluation of the harness the changes were made on: the latest earlier evaluation whose
    tree equals the tree the evolve agent started from (after the reverts), else the previous one."""
    started = run.store.con.execute(
        "SELECT harness_commit FROM iterations WHERE run_id = ? AND iteration = ? AND phase = 'REVERT'",
        [run.run_id, iteration - 1]).fetchone()
    if started and started[0]:
        tree = run.repo.tree_id(started[0])
        evaluated = run.store.con.execute(
            "SELECT DISTINCT iteration, harness_commit FROM rollouts WHERE run_id = ? AND iteration < ? "
            "ORDER BY iteration DESC", [run.run_id, iteration]).fetchall()
        for it, commit in evaluated:
            if run.repo.tree_id(commit) == tree:
                return it
    return iteration - 1


def _extra_rollouts(run: Run, iteration: int, task_ids: list[str]) -> None:
    """A few more rollouts of borderline tasks only, numbered after the evaluation's attempts."""
    first = run.store.con.execute(
        "SELECT coalesce(max(attempt) + 1, 0) FROM rollouts WHERE run_id = ? AND iteration = ?",
        [run.run_id, iteration]).fetchone()[0]
    tasks = {t.id: (t, s) for t, s in run.items}
    plan = [(*tasks[t], first + n) for t in task_ids for n in range(run.config.extra_rollouts)]
    out_dir = run.paths.rollouts(iteration)
    done = {p.stem for p in out_dir.glob("*.json")}
    # ATTRIBUTE runs before REVERT, so the workspace is still the harness this iteration evaluated.
    run_rollouts(
        load_harness(run.repo.path), run.repo.head(), run.items,
        _model(run.config.model, run.config.workers),
        run_id=run.run_id, iteration=iteration, out_dir=out_dir, plan=plan,
        workers=run.config.workers, rollout_timeout=run.config.rollout_timeout, skip=done,
        sandbox_factory=_sandbox_factory(run),
    )
    run.store.ingest_dir(out_dir)


def _test_file_lines(run: Run) -> list[str]:
    """Lines of every task's hidden tests: the evidence must never quote them."""
    lines = []
    for task, _ in run.items:
        for path in sorted(task.tests_dir.rglob("*")):
            if path.is_file():
                lines += [ln.strip() for ln in path.read_text(errors="replace").splitlines()]
    return [ln for ln in lines if ln]
