"""What a run's report shows, gathered once from the run directory (run.yaml, traces.duckdb,
manifests/, the workspace's git history) into pydantic records. Drawing it is build.py's job."""
from __future__ import annotations

import json
from collections import Counter
from pathlib import Path
from typing import Any

import duckdb
from pydantic import BaseModel

from evolve.config import load_config
from manifests.noise import counts_from_db, noise_from_db
from manifests.schema import ChangeManifestEntry, IterationManifest
from manifests.scores import Scores, score_changes
from manifests.store import load_run_manifests
from traces.queries import IterationTotals, iteration_totals, pass_counts
from traces.store import TraceStore
from workspace.repo import HarnessRepo

PENDING = "pending"  # verdict and decision of a change the next evaluation has not judged yet
_EMPTY_TREE = "4b825dc642cb6eb9a060e54bf8d69288fbee4904"  # git's id of the empty tree


class ChangeRow(BaseModel):
    """One change as the report's table shows it: its prediction, what happened and its diff."""

    iteration: int  # the iteration whose EVOLVE phase made it
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
    revert_commit: str | None
    placebo: bool
    diff: str


class HeatRow(BaseModel):
    task_id: str
    split: str
    rates: list[float | None]  # per iteration of ReportData.iterations, None = not evaluated


class ReportData(BaseModel):
    run_id: str
    model: str
    k: int
    totals: list[IterationTotals]
    heat: list[HeatRow]
    changes: list[ChangeRow]
    scores: dict[int, Scores]  # by judging iteration

    @property
    def iterations(self) -> list[int]:
        return [t.iteration for t in self.totals]

    def verdict_counts(self) -> dict[int, Counter[str]]:
        """Per judging iteration, how many changes got each verdict."""
        counts: dict[int, Counter[str]] = {}
        for row in self.changes:
            if row.verdict != PENDING:
                counts.setdefault(row.iteration + 1, Counter())[row.verdict] += 1
        return counts

    def revert_share(self, iteration: int) -> float | None:
        """How often the loop said no among the changes judged in `iteration`."""
        judged = [r for r in self.changes if r.verdict != PENDING and r.iteration + 1 == iteration]
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
    """Read everything the report needs; the trace store is opened read-only."""
    paths, config = load_config(run_dir)
    manifests = load_run_manifests(paths.root)
    repo = HarnessRepo(paths.workspace)
    with TraceStore(paths.db, read_only=True) as store:
        totals = iteration_totals(store.con, config.run_id)
        verdicts = _verdict_rows(store.con, config.run_id)
        heat = _heat_rows(store.con, config.run_id, [t.iteration for t in totals])
        scores = _iteration_scores(store.con, config.run_id, config.k, manifests,
                                   {t.iteration for t in totals})
    changes = [_change_row(m.iteration, c, verdicts.get(c.id), repo)
               for m in manifests for c in m.changes]
    return ReportData(run_id=config.run_id, model=config.model, k=config.k, totals=totals,
                      heat=heat, changes=changes, scores=scores)


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


def _verdict_rows(con: duckdb.DuckDBPyConnection, run_id: str) -> dict[str, dict[str, Any]]:
    rows = con.execute(
        "SELECT change_id, verdict, decision, revert_commit, detail FROM verdicts WHERE run_id = ?",
        [run_id],
    ).fetchall()
    return {cid: {"verdict": v, "decision": d, "revert_commit": rc, "detail": json.loads(detail)}
            for cid, v, d, rc, detail in rows}


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


def _iteration_scores(
    con: duckdb.DuckDBPyConnection, run_id: str, k: int, manifests: list[IterationManifest],
    evaluated: set[int],
) -> dict[int, Scores]:
    """Prediction scores of each iteration's changes, judged on the next evaluation (if any)."""
    scores = {}
    for manifest in manifests:
        judged_in = manifest.iteration + 1
        if not manifest.changes or judged_in not in evaluated:
            continue
        before = counts_from_db(con, run_id, manifest.iteration)
        after = counts_from_db(con, run_id, judged_in)
        noise = noise_from_db(con, run_id, k, manifest.iteration)
        scores[judged_in] = score_changes(manifest.changes, before, after, noise)
    return scores


def _prediction_text(change: ChangeManifestEntry) -> str:
    parts = [f"fix {p.task_id} p={p.probability:.2f}" for p in change.predicted_fixes]
    parts += [f"regress {p.task_id} p={p.probability:.2f}" for p in change.predicted_regressions]
    return "; ".join(parts) or "nothing predicted"


def _change_row(iteration: int, change: ChangeManifestEntry, verdict: dict[str, Any] | None,
                repo: HarnessRepo) -> ChangeRow:
    verdict = verdict or {"verdict": PENDING, "decision": PENDING, "revert_commit": None,
                          "detail": {}}
    detail = verdict["detail"]
    sha = repo.commit_info(change.commit).sha
    return ChangeRow(
        iteration=iteration, change_id=change.id, component=change.component, commit=sha,
        targeted_fix=change.targeted_fix, root_cause=change.root_cause,
        prediction=_prediction_text(change),
        confirmed=detail.get("confirmed_fixes", []),
        regressions=[*detail.get("predicted_regressions_observed", []),
                     *detail.get("unpredicted_regressions", [])],
        verdict=verdict["verdict"], decision=verdict["decision"],
        reason=detail.get("reason") or detail.get("revert_reason") or "",
        revert_commit=verdict["revert_commit"], placebo=bool(detail.get("placebo")),
        diff=commit_diff(repo, sha),
    )
