"""What a run's report shows, gathered once from the run directory into pydantic records: numbers
from the trace store, changes and scores from the run ledger (exactly what the loop decided, never
recomputed), diffs from the workspace's git history. Drawing it is build.py's job."""
from __future__ import annotations

from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel

from evoharness.evolve.evaluate.evaluation import EvalDir
from evoharness.evolve.ledger import RunLedger
from evoharness.evolve.ledger.records import ExamRecord
from evoharness.evolve.lineage import LineageRow, lineage, prediction_text
from evoharness.evolve.run import read_run
from evoharness.evolve.evaluate.transfer import TransferRow, compare_eval
from evoharness.manifests.record import PENDING, ChangeRecord
from evoharness.manifests.scores import Scores
from evoharness.traces.queries import (IterationTotals, ModelTimeTotals, iteration_totals,
                            model_time_totals, pass_counts)
from evoharness.workspace.repo import HarnessRepo
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree


class ChangeRow(BaseModel):
    """One change as the report's table shows it: its prediction, what happened and its diff."""

    iteration: int  # the iteration whose EVOLVE phase made it
    judged_in: int  # the iteration whose TRIAL judged it: the one that made it
    change_id: str
    component: str
    commit: str  # full sha
    targeted_fix: str
    root_cause: str
    prediction: str
    confirmed: list[str]
    regressions: list[str]
    verdict: str
    decision: str
    reason: str
    trial: str | None  # how its trial ran (Judgement.summary), None before it ran
    revert_commit: str | None
    placebo: bool
    diff: str


class HeatRow(BaseModel):
    task_id: str
    split: str
    rates: list[float | None]  # per iteration of ReportData.iterations, None = not evaluated


class TransferTable(BaseModel):
    """One evaluation directory under RUN/evals/ and its comparisons (evolve/evaluate/transfer.py)."""

    name: str
    rows: list[TransferRow]


class ReportData(BaseModel):
    run_id: str
    model: str
    k: int
    totals: list[IterationTotals]
    heat: list[HeatRow]
    changes: list[ChangeRow]
    scores: dict[int, Scores]  # by the iteration that made and judged the changes
    exam: ExamRecord | None = None  # the latest final exam
    transfers: list[TransferTable] = []
    lineage: list[LineageRow] = []  # every change, as the report's first screen shows it
    model_time: list[ModelTimeTotals] = []  # per iteration, where the model time went

    @property
    def iterations(self) -> list[int]:
        return [t.iteration for t in self.totals]

    def verdict_counts(self) -> dict[int, Counter[str]]:
        """Per judging iteration, how many changes got each verdict."""
        counts: dict[int, Counter[str]] = {}
        for row in self.changes:
            if row.verdict != PENDING:
                counts.setdefault(row.judged_in, Counter())[row.verdict] += 1
        return counts

    def revert_share(self, iteration: int) -> float | None:
        """How often the loop said no among the changes judged in `iteration`."""
        judged = [r for r in self.changes if r.verdict != PENDING and r.judged_in == iteration]
        return sum(r.decision == "revert" for r in judged) / len(judged) if judged else None

    def summary(self) -> dict[str, Any]:
        rates = [(t.pass_rate_train, t.iteration) for t in self.totals
                 if t.pass_rate_train is not None]
        best = max(rates, default=None)
        decisions = Counter(r.decision for r in self.changes)
        placebos = [r for r in self.changes if r.placebo and r.decision != PENDING]
        return {
            "run_id": self.run_id, "model": self.model, "k": self.k,
            "iterations": len(self.totals),
            "best": None if best is None else {"rate": best[0], "iteration": best[1]},
            "changes": len(self.changes), "kept": decisions["keep"],
            "reverted": decisions["revert"], "pending": decisions[PENDING],
            # The false-accept rate: placebos (edits that change nothing) the loop kept anyway.
            "placebos": None if not placebos else {
                "n": len(placebos), "kept": sum(r.decision == "keep" for r in placebos)},
        }


def collect(run_dir: str | Path) -> ReportData:
    """Read everything the report needs (while an evolve runs too)."""
    config, ledger = read_run(run_dir)
    repo = HarnessRepo(ledger.paths.workspace)
    with ledger.reading() as store:
        totals = iteration_totals(store.con, config.run_id)
        heat = _heat_rows(store.con, config.run_id, [t.iteration for t in totals])
        model_time = model_time_totals(store.con, config.run_id)
    records = ledger.changes()
    exams = ledger.exams()
    return ReportData(run_id=config.run_id, model=config.model, k=config.k, totals=totals,
                      heat=heat, changes=[_change_row(r, repo) for r in records],
                      scores=ledger.scoreboard().iterations, exam=exams[-1] if exams else None,
                      transfers=_transfers(ledger), lineage=lineage(records),
                      model_time=model_time)


def _transfers(ledger: RunLedger) -> list[TransferTable]:
    """Each finished evaluation kept under RUN/evals/, compared against its first harness."""
    tables = []
    for plan in sorted(ledger.paths.evals.glob("*/plan.json")):
        folder = EvalDir(plan.parent)
        if folder.db.exists():
            tables.append(TransferTable(name=plan.parent.name,
                                        rows=compare_eval([folder])))
    return tables


def find_change(data: ReportData, repo: HarnessRepo, commit: str) -> ChangeRow | None:
    """The change whose commit (or change id) is `commit`; None for a commit without a manifest."""
    named = next((r for r in data.changes if r.change_id == commit), None)
    if named is not None:
        return named
    sha = repo.commit_info(commit).sha
    return next((r for r in data.changes if r.commit == sha), None)


def commit_diff(repo: HarnessRepo, sha: str) -> str:
    """What `sha` changed against its parent (against nothing for the root commit)."""
    has_parent = len(repo.log(max_count=2, rev=sha)) > 1
    return repo.diff(f"{sha}^" if has_parent else _EMPTY_TREE, sha)


def _heat_rows(con: duckdb.DuckDBPyConnection, run_id: str, iterations: list[int]) -> list[HeatRow]:
    """Per task (train first, then held-out) its pass rate in every iteration."""
    rows = []
    for split in ("train", "heldout"):
        per_iteration = [pass_counts(con, run_id, it, split) for it in iterations]
        tasks = sorted(set().union(*per_iteration))
        for task in tasks:
            rates = [c[task].passes / c[task].n if task in c else None for c in per_iteration]
            rows.append(HeatRow(task_id=task, split=split, rates=rates))
    return rows


def _change_row(record: ChangeRecord, repo: HarnessRepo) -> ChangeRow:
    change, judgement = record.entry, record.judgement
    sha = repo.commit_info(change.commit).sha
    return ChangeRow(
        iteration=record.iteration, change_id=change.id,
        judged_in=judgement.iteration if judgement else record.iteration,
        component=change.component, commit=sha,
        targeted_fix=change.targeted_fix, root_cause=change.root_cause,
        prediction=prediction_text(change),
        confirmed=judgement.confirmed_fixes if judgement else [],
        regressions=judgement.regressions if judgement else [],
        verdict=record.verdict, decision=record.decision, reason=record.reason,
        trial=judgement.summary() if judgement else None, revert_commit=record.revert.revert_commit if record.revert else None,
        placebo=record.placebo, diff=commit_diff(repo, sha),
    )
