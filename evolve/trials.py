"""The TRIAL phase's machinery: every change of the iteration judged in a trial of its own. This
module sets each trial up, runs the rollouts its trial asks for and stores its verdict as the
change's judgement; what to run and what the outcomes mean is manifests/trial.py's, running a
batch rollouts.py's, the records the ledger's.

A change's setup, fixed before its first rollout and stored (a resumed trial reads it back):
- Base: the commit the evolve session started from, the harness this iteration evaluated. Its
  history pools every evaluation of that git tree in the run (train tasks, scored rollouts, never
  a trial's), so a revert back to an earlier tree counts as a repeat of it.
- Change tree: the change alone, cherry-picked onto the base without touching the workspace and
  kept on the branch trial/<change_id>, so no sibling's edit is in either arm (harness.yaml
  merges by its structure: two registrations in a row each apply alone). A change that does
  not apply there alone (it edits lines an earlier change of its session edited, e.g. two rules
  appended one after the other), or does not validate alone (it needs a file an earlier change
  added), is judged as committed against its parent: the arms still differ by this change only.
  That base holds the earlier siblings and was never evaluated, so the screen picks its tasks
  from the session base's history but takes their floors from fresh base rollouts alone: a
  sibling's regression is never charged to this change. The verdict says which ("applied").
  Why not every change on its parent: a change kept on top of a sibling that is then reverted
  would never have been measured without it. Why not the combined head: siblings would share
  credit and shield each other's regressions.
- Validation tasks (a run whose suite lists some): those where this iteration's evaluation of the
  base failed the way the change targets (the cue of the library entry it applies, by its
  Library-Entry trailer; any failure for a change of the agent's own), the most such failed
  rollouts first, at most `verdicts.validation_tasks`. Chosen from the base's rollouts only, as
  the predicted tasks are: both arms run fresh, so the choice cannot favour the change. Their
  trial rollouts are labelled split "validation", so no evidence, offer or SQL the evolve agent
  reads ever holds them.

Rounds: each gathers the requests of every undecided trial into one batch (the executor runs them
side by side), runs and ingests it, and steps every trial again on the stored rollouts. Rollout
ids are deterministic (it{N}-trial-{change}-{arm}-{task}-a{attempt}) and a request takes the lowest
attempt numbers not yet recorded, so a batch killed half way is completed, never repeated; a trial
sees its outcomes in attempt order, never in the order they finished (fast failures would come
first). A verdict is a function of the stored rollouts, so a resumed trial decides the same.
"""
from __future__ import annotations

import tempfile
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from evoharness.errors import EvoError
from evoharness.manifests.history import TaskCounts, TreeHistory
from evoharness.manifests.judgement import Judgement, TrialSetup
from evoharness.manifests.probe import ProbeOutcomes
from evoharness.manifests.schema import ChangeManifestEntry, IterationManifest
from evoharness.manifests.trial import RolloutRequest, Trial
from evoharness.tasks.executor import HarnessTree, RolloutSpec, load_tree
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.traces.queries import TrialRollout, evaluated_counts, trial_rollouts

from .ledger.records import TrialResult
from .library.entry import LibraryEntry
from .placebo import is_placebo
from .rollouts import Progress, run_batch
from .run import Run

Stored = dict[str, dict[tuple[str, str], list[TrialRollout]]]  # change -> (arm, task) -> rows


def run_trials(run: Run, iteration: int, progress: Progress | None = None) -> TrialResult:
    """Judge every change the iteration's EVOLVE registered; each verdict is stored as soon as
    its trial decides."""
    manifest = run.ledger.manifest(iteration, run.train_ids)
    changes = manifest.changes if manifest else []
    if not changes:
        return TrialResult(changes=0)
    setups = {c.id: set_up(run, manifest, c) for c in changes}
    trials = {c.id: trial_of(c, setups[c.id]) for c in changes}
    out_dir = run.paths.trial_rollouts(iteration)
    rounds = 0
    while True:
        run.ledger.ingest(out_dir)  # a killed round's files first: they are never run again
        stored = stored_rollouts(run, iteration)
        specs = []
        for change in changes:
            rows = stored.get(change.id, {})
            step = trials[change.id].step(outcomes(rows))
            if step.verdict is not None:
                _record(run, Judgement(setup=setups[change.id], verdict=step.verdict))
            else:
                specs += _specs(run, setups[change.id], step.requests, rows)
        if not specs:
            break
        _run_round(run, specs, out_dir, progress)
        rounds += 1
    judged = run.ledger.judgements()
    return TrialResult(
        changes=len(changes), rounds=rounds,
        rollouts=sum(len(rows) for per in stored.values() for rows in per.values()),
        alone=[c.id for c in changes if setups[c.id].applied == "alone"],
        on_parent=[c.id for c in changes if setups[c.id].applied == "on_parent"],
        placebos=[c.id for c in changes if setups[c.id].placebo],
        decisions={c.id: judged[c.id].decision for c in changes})


def probe_pairs_to_cap(run: Run, iteration: int, progress: Progress | None = None
                      ) -> dict[str, list[tuple[bool, bool]]]:
    """Each judged change's probe run on to its cap, whatever its trial decided, and its pairs
    there: change id -> (base passed, change passed) per pair, task by task in attempt order. An
    estimate over them has a size fixed before any rollout, so a fixed-size interval holds for
    it, where one read at the look that stopped the trial would not (benchmarks/remedies.py).
    The verdicts stand: a trial reads no rollout past its deciding look. A killed round's files
    are taken in first, as in run_trials, so a resume completes the round."""
    manifest = run.ledger.manifest(iteration, run.train_ids)
    out_dir = run.paths.trial_rollouts(iteration)
    run.ledger.ingest(out_dir)
    stored = stored_rollouts(run, iteration)
    plans, specs = {}, []
    for change in manifest.changes if manifest else []:
        setup = run.ledger.trial_setup(change.id)
        plan = trial_of(change, setup).probe if setup else None
        if plan is None:
            continue
        plans[change.id] = plan
        rows = stored.get(change.id, {})
        missing = {(task, arm): plan.pairs_at_cap - len(rows.get((arm, task), []))
                   for task in plan.tasks for arm in ("base", "change")}
        specs += _specs(run, setup, [RolloutRequest(task_id=task, arm=arm, count=count)
                                     for (task, arm), count in missing.items() if count > 0], rows)
    if specs:
        _run_round(run, specs, out_dir, progress)
        run.ledger.ingest(out_dir)
        stored = stored_rollouts(run, iteration)
    pairs = {}
    for change_id, plan in plans.items():
        arms, cap = outcomes(stored.get(change_id, {})), plan.pairs_at_cap
        pairs[change_id] = [pair for task in plan.tasks for pair in
                            zip(arms.base[task][:cap], arms.change[task][:cap])]
    return pairs


def trial_of(change: ChangeManifestEntry, setup: TrialSetup) -> Trial:
    """The change's trial as its setup fixed it (the same on every resume)."""
    return Trial(change, setup.history, setup.design, candidates=setup.candidates,
                 validation=setup.validation)


def set_up(run: Run, manifest: IterationManifest, change: ChangeManifestEntry) -> TrialSetup:
    """The change's stored setup, or a new one (see the module docstring), stored before any
    rollout of its trial runs."""
    stored = run.ledger.trial_setup(change.id)
    if stored is not None:
        return stored
    repo = run.repo
    start = manifest.harness_commit_before
    candidates = tree_history(run, repo.tree_id(start))
    alone = repo.apply_alone(change.commit, start,
                             message=f"trial of {change.id}: the change alone on {start[:12]}")
    if alone is not None and _validates(run, alone):
        base, arm, applied = start, alone, "alone"
    else:
        base, arm, applied = repo.parent(change.commit), change.commit, "on_parent"
    base_tree = repo.tree_id(base)
    history = candidates if base_tree == candidates.tree else tree_history(run, base_tree)
    repo.set_branch(f"trial/{change.id}", arm)
    entry = applied_entry(run, change)
    targets = list(entry.cue.signature) if entry else None
    level = entry.next_level() if entry else None  # its series' pre-registered level, if any
    design = run.config.verdicts if level is None else run.config.verdicts.model_copy(
        update={"alpha": level})
    setup = TrialSetup(
        change_id=change.id, run_id=run.run_id, iteration=manifest.iteration, applied=applied,
        base_commit=base, base_tree=base_tree, change_commit=arm, change_tree=repo.tree_id(arm),
        history=history, candidates=candidates, design=design,
        placebo=is_placebo(repo, arm), targets=targets,
        validation=validation_tasks(run, manifest.iteration, targets))
    run.ledger.record_trial_setup(setup)
    return setup


def applied_entry(run: Run, change: ChangeManifestEntry) -> LibraryEntry | None:
    """The library entry a change applies (its commit's Library-Entry trailer), as the run's
    shelf holds it: its cue is the failure the change targets, and a series registered on it
    fixes the trial's level. None for a change of the agent's own, or an entry no longer on the
    shelf."""
    from .agent.change import LIBRARY_TRAILER  # the evolve agent is the heaviest import
    from .library.cue import shelf

    applied = run.repo.commit_info(change.commit).trailers.get(LIBRARY_TRAILER)
    if not applied:
        return None
    found = [e for e, _ in shelf(run.config.library, run.config.starter_library) if e.id == applied]
    return found[0] if found else None


def validation_tasks(run: Run, iteration: int, targets: list[str] | None) -> list[str] | None:
    """The validation tasks a change's trial runs (see the module docstring); None when the run
    has none at all."""
    from .library.cue import reached_tasks, rollout_signatures, tasks_showing

    if not run.validation_ids:
        return None
    with run.ledger.reading() as store:
        signatures = rollout_signatures(store.con, run.run_id, iteration, "validation")
        reached = reached_tasks(store.con, run.run_id, "validation")
    shown = tasks_showing(targets, signatures, reached)
    return shown[:run.config.verdicts.validation_tasks]


def tree_history(run: Run, tree: str) -> TreeHistory:
    """Train pass counts over every evaluation of the run whose harness has git tree `tree`."""
    pooled: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    trees: dict[str, str] = {}
    with run.ledger.reading() as store:
        rows = evaluated_counts(store.con, run.run_id)
    for commit, task, passes, scored in rows:
        if commit not in trees:
            trees[commit] = run.repo.tree_id(commit)
        if trees[commit] == tree and task in run.train_ids:
            pooled[task][0] += passes
            pooled[task][1] += scored
    return TreeHistory(tree=tree, counts={t: TaskCounts(passes=p, total=n)
                                          for t, (p, n) in sorted(pooled.items())})


def stored_rollouts(run: Run, iteration: int) -> Stored:
    """Every stored rollout of the iteration's trials, by change, arm and task, in attempt order."""
    with run.ledger.reading() as store:
        rows = trial_rollouts(store.con, run.run_id, iteration)
    stored: Stored = {}
    for row in rows:
        stored.setdefault(row.change_id, {}).setdefault((row.arm, row.task_id), []).append(row)
    return stored


def outcomes(rows: dict[tuple[str, str], list[TrialRollout]]) -> ProbeOutcomes:
    """A trial's judged outcomes, per arm and task in attempt order. A rollout that stayed an
    infra error through its reruns is a failure of its arm: left out, it would let a change that
    turns its failures into infra errors look like a fix (or hide a regression)."""
    arms: dict[str, dict[str, list[bool]]] = {"base": {}, "change": {}}
    for (arm, task), recorded in rows.items():
        arms[arm][task] = [r.outcome == Outcome.PASS for r in recorded]
    return ProbeOutcomes(**arms)


def _specs(run: Run, setup: TrialSetup, requests: Sequence[RolloutRequest],
           rows: dict[tuple[str, str], list[TrialRollout]]) -> list[RolloutSpec]:
    """The rollouts of `requests`, each on its arm's tree, numbered with the lowest attempts not
    yet recorded for that arm and task."""
    tasks = {t.id: t for t, _ in run.items}
    validation = set(setup.validation or ())
    trees = {"base": HarnessTree.at(run.repo, setup.base_commit),
             "change": HarnessTree.at(run.repo, setup.change_commit)}
    specs = []
    for request in requests:
        used = {r.attempt for r in rows.get((request.arm, request.task_id), [])}
        attempts = [a for a in range(len(used) + request.count) if a not in used][:request.count]
        specs += [RolloutSpec(run_id=run.run_id, iteration=setup.iteration,
                              task=tasks[request.task_id], attempt=attempt,
                              split="validation" if request.task_id in validation else "train",
                              harness=trees[request.arm], model=run.config.model,
                              trial_change=setup.change_id, trial_arm=request.arm)
                  for attempt in attempts]
    return specs


def _run_round(run: Run, specs: list[RolloutSpec], out_dir: Path,
               progress: Progress | None) -> None:
    """One batch. Infra errors count as failures of their arm (outcomes), so a trial goes on past
    them; but a batch in which every rollout failed for the infrastructure, the base's among
    them (the tree this iteration evaluated), is an outage, not a harness: it stops the phase
    rather than revert every change. Its files stay, so a resume goes on."""
    failed: list[str] = []
    arms: set[str] = set()

    def seen(result: RolloutResult) -> None:
        if result.outcome == Outcome.INFRA_ERROR:
            failed.append(result.exit_reason)
            arms.add(result.trial_arm)
        if progress is not None:
            progress(result)

    run_batch(run, specs, out_dir, seen)
    if len(failed) == len(specs) and "base" in arms:
        raise EvoError(f"every rollout of a trial batch ({len(specs)}) failed for the "
                       "infrastructure, not the harness", field="exit_reason", value=failed[0],
                       hint=f"fix the cause, then `evoharness evolve {run.paths.root} --resume`")


def _record(run: Run, judgement: Judgement) -> None:
    """Store the judgement unless the same one is stored already (a resumed trial)."""
    if run.ledger.judgement(judgement.change_id) != judgement:
        run.ledger.record_judgements([judgement])


def _validates(run: Run, commit: str) -> bool:
    """Whether the harness at `commit` passes validation (a change alone may not)."""
    with tempfile.TemporaryDirectory(prefix="evo-trial-") as scratch:
        try:
            load_tree(HarnessTree.at(run.repo, commit), Path(scratch))
        except EvoError:
            return False
    return True
