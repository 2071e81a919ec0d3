"""`evoharness library add RUN`: a run's kept changes become library entries (cue, edits, diff,
manifest, judgement numbers), and every change the run made by applying an entry (its commit's
Library-Entry trailer) adds that run's outcome to the entry, kept or reverted, so the library
records where each lesson held. A starter entry's record lives in the library it is filed into:
the first outcome copies the entry there, and that copy is offered from then on. Filing a run twice
changes nothing."""
from __future__ import annotations

import hashlib
import json
import re
import time
from pathlib import Path

from pydantic import BaseModel, Field

from evoharness.errors import EvoError
from evoharness.evolve.agent.change import LIBRARY_TRAILER
from evoharness.evolve.agent.tidy import edits_as_meant
from evoharness.evolve.evaluate.compare import PairInterval, bonferroni, pair_interval_of_counts
from evoharness.evolve.ledger import RunLedger, RunPaths
from evoharness.evolve.report.data import commit_diff
from evoharness.evolve.run import read_run
from evoharness.manifests.judgement import PAIRED_TRIAL, Judgement
from evoharness.manifests.probe import plan_probe
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.series import SeriesPlan, Spending, register
from evoharness.manifests.verdict import TrialVerdict
from evoharness.workspace.repo import HarnessRepo

from .cue import failure_signature
from .entry import Cue, LibraryEntry, Numbers, Trial
from .starter import starter_diff, starter_entries
from .store import Library


class FilingReport(BaseModel):
    added: list[str] = Field(default_factory=list)  # new entries
    outcomes: list[str] = Field(default_factory=list)  # "ENTRY: keep|revert" of applied entries
    pending: list[str] = Field(default_factory=list)  # changes no evaluation has judged yet
    commit: str | None = None  # the library's commit, None when nothing changed


def file_run(library: Library, run_dir: str | Path) -> FilingReport:
    config, ledger = read_run(run_dir)
    repo = HarnessRepo(ledger.paths.workspace)
    entries = {e.id: e for e in library.entries()}
    starters = {e.id: e for e in starter_entries() if e.id not in entries}
    filed = {(t.run_id, t.change_id) for e in entries.values() for t in e.trials}
    report, changed = FilingReport(), {}
    for record in ledger.changes():
        if record.judgement is None or record.decision not in ("keep", "revert"):
            report.pending.append(record.id)
            continue
        if (ledger.run_id, record.id) in filed:
            continue
        applied = repo.commit_info(record.entry.commit).trailers.get(LIBRARY_TRAILER)
        trials = _trials(record, record.judgement, config.model, config.tasks, applied is not None)
        if applied in entries or applied in starters:
            diff = None if applied in entries else starter_diff(applied)  # None: keep the filed
            entry = entries.get(applied) or starters.pop(applied)
            entries[applied] = entry.model_copy(update={"trials": [*entry.trials, *trials]})
            changed[applied] = (entries[applied], changed.get(applied, (None, diff))[1])
            report.outcomes.append(f"{applied}: {record.decision}")
        elif record.decision == "keep":
            entry = _new_entry(record, trials, ledger)
            entries[entry.id] = entry
            changed[entry.id] = (entry, commit_diff(repo, repo.commit_info(record.entry.commit).sha))
            report.added.append(entry.id)
    report.commit = library.save(list(changed.values()), _message(ledger.run_id, report))
    return report


def register_series(library: Library, entry_id: str, size: int, alpha: float,
                    spending: Spending = "equal") -> SeriesPlan:
    """Register a series of `size` trials of one entry (a starter is copied into the library with
    it), each trial's level fixed now; the loop judges a change applying the entry at its next
    level. Refused while the entry's current series has trials left: its family was fixed first
    and is not to be reshaped by its results."""
    entries = {e.id: e for e in library.entries()}
    starters = {e.id: e for e in starter_entries()}
    if entry_id not in entries and entry_id not in starters:
        raise EvoError("no such library or starter entry", file=library.root, field="entry",
                       value=entry_id, hint="see `evoharness library list DIR`")
    entry = entries.get(entry_id) or starters[entry_id]
    if entry.series is not None and entry.next_level() is not None:
        raise EvoError(f"its series has {entry.series.size - len(entry.series_trials())} trial(s) "
                       "left", field="entry", value=entry_id,
                       hint="run them; a new series is registered once the family is used up")
    plan = register(f"{entry_id}-{len(entry.decisions) + 1}", size, alpha, spending)
    diff = None if entry_id in entries else starter_diff(entry_id)
    library.save([(entry.model_copy(update={"series": plan}), diff)],
                 f"Register a series of {size} trial(s) of {entry_id}\n\n{plan.line()}")
    return plan


def _new_entry(record: ChangeRecord, trials: list[Trial], ledger: RunLedger) -> LibraryEntry:
    """The entry of a kept change: its cue is the failure signature of its evidence's tasks in the
    evaluation it was made from."""
    change = record.entry
    tasks = sorted({ref.task_id for ref in change.failure_evidence})
    with ledger.reading() as store:
        signature = failure_signature(store.con, ledger.run_id, record.iteration, tasks or None)
    return LibraryEntry(
        id=_entry_id(change.root_cause, ledger.run_id, change.id),
        cue=Cue(root_cause=change.root_cause, signature=signature, tasks=tasks),
        component=change.component, targeted_fix=change.targeted_fix,
        edits=_edits(ledger.paths, record.iteration, change.id), manifest=change, trials=trials)


def _trials(record: ChangeRecord, judgement: Judgement, model: str, suite: Path,
            applied: bool) -> list[Trial]:
    """The judgement's trial on its predicted tasks and, when its run had validation tasks and
    the validation test ran, on those: one record each, with the same decision."""
    check = judgement.verdict.validation
    sides = ["predicted"] + (["validation"] if check and check.result in ("shown", "not_shown")
                             else [])
    return [Trial(run_id=judgement.run_id, change_id=record.id, iteration=judgement.iteration,
                  model=model, suite=Path(suite).name, suite_path=str(suite),
                  decision=record.decision, applied=applied, where=side,
                  level=judgement.verdict.design.alpha,
                  numbers=trial_numbers(judgement, record.verdict, record.reason, side),
                  filed_at=time.time()) for side in sides]


def trial_numbers(j: Judgement, verdict: str, reason: str, side: str = "predicted") -> Numbers:
    """The trial's own figures on one side (its predicted tasks, or the validation tasks): the
    observed gain (change arm - base arm over the same pairs) with `effect_interval`, the
    rollouts its decision used and that test's sequential p-value (exact, allowing for every
    look)."""
    v = j.verdict
    role = "probe" if side == "predicted" else "validation"
    p_value = v.p_value if side == "predicted" else v.validation.p_value
    common = dict(method=PAIRED_TRIAL, verdict=verdict, rollouts=v.rollouts.used,
                  p_value=p_value, reason=reason)
    interval = effect_interval(v, role)
    if interval is None:
        return Numbers(**common)
    return Numbers(**common, effect=interval.mean, lo=interval.lo, hi=interval.hi,
                   confidence=interval.confidence, interval_over="pairs")


def effect_interval(v: TrialVerdict, role: str = "probe") -> PairInterval | None:
    """One paired test's gain over its pairs at the deciding look (`role`: probe = the predicted
    tasks, validation = the validation tasks; every task has as many pairs, so the mean over
    pairs is the mean over tasks) with Newcombe's pair interval at 1 - alpha / L, L the looks
    the test could have stopped at: the interval holds at every look at once (Bonferroni), so
    at the look the trial chose too, however early a gain stopped it. None when no pair ran."""
    rows = [t for t in v.tasks if t.role == role]
    paired = [t for t in rows if t.base_counts is not None and t.change_counts is not None]
    design = v.design if v.validation is None else v.design.with_validation()
    plan = plan_probe([t.task_id for t in rows], design)
    if not paired or plan is None:
        return None
    both = sum(t.base_counts.passes - t.losses for t in paired)
    wins, losses = sum(t.wins for t in paired), sum(t.losses for t in paired)
    pairs = sum(t.base_counts.total for t in paired)
    return pair_interval_of_counts(both, wins, losses, pairs - both - wins - losses,
                                   confidence=bonferroni(1 - v.design.alpha, plan.max_looks))


def _edits(paths: RunPaths, iteration: int, change_id: str) -> list[dict]:
    """The `change` call that committed `change_id`, from the evolve agent's trace."""
    trace = paths.evolve_trace(iteration)
    if not trace.is_file():
        return []
    events = json.loads(trace.read_text())
    calls = [e for e in events if e["kind"] == "tool_call" and e["name"] == "change"]
    results = [e for e in events if e["kind"] == "tool_result" and e["name"] == "change"]
    for call, result in zip(calls, results):
        if result["content"].startswith(f"committed change {change_id} "):
            return [e for e in edits_as_meant(call["data"].get("arguments", {})) if isinstance(e, dict)]
    return []


def _entry_id(root_cause: str, run_id: str, change_id: str) -> str:
    words = re.findall(r"[a-z0-9]+", root_cause.lower())[:6]
    digest = hashlib.sha256(f"{run_id}/{change_id}".encode()).hexdigest()[:6]
    return "-".join([*words, digest])


def _message(run_id: str, report: FilingReport) -> str:
    return (f"File run {run_id}: {len(report.added)} kept change(s) added, "
            f"{len(report.outcomes)} outcome(s) of applied entries\n\n"
            + "\n".join([*(f"added {e}" for e in report.added), *report.outcomes]))
