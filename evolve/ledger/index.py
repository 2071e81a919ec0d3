"""The store's index of the ledger's records: the only SQL that writes the run's tables (runs,
iterations, changes, verdicts, reverts, exams). Every write is an idempotent upsert of a record that is
already on disk, so indexing again (after a crash, or into a rebuilt store) changes nothing."""
from __future__ import annotations

import json
from collections.abc import Iterable

import duckdb

from evoharness.manifests.judgement import PAIRED_TRIAL, Judgement
from evoharness.manifests.revert import RevertRecord
from evoharness.manifests.schema import IterationManifest
from evoharness.traces.ingest import transaction

from .records import ExamRecord, PhaseRecord, RunRecord


def index_run(con: duckdb.DuckDBPyConnection, run: RunRecord) -> None:
    con.execute("INSERT OR REPLACE INTO runs VALUES (?, ?, ?)",
                [run.run_id, run.created_at, json.dumps(run.config, sort_keys=True)])


def index_phase(con: duckdb.DuckDBPyConnection, record: PhaseRecord) -> None:
    detail = {"seconds": record.seconds, **record.result.model_dump(mode="json")}
    con.execute("INSERT OR REPLACE INTO iterations VALUES (?, ?, ?, ?, ?, ?)",
                [record.run_id, record.iteration, record.phase.value, record.harness_commit,
                 record.finished_at, json.dumps(detail, sort_keys=True)])


def index_changes(con: duckdb.DuckDBPyConnection, manifest: IterationManifest) -> None:
    for change in manifest.changes:
        con.execute("INSERT OR REPLACE INTO changes VALUES (?, ?, ?, ?, ?, ?)",
                    [change.id, manifest.run_id, manifest.iteration, change.component,
                     change.commit, change.model_dump_json()])


def index_judgement(con: duckdb.DuckDBPyConnection, j: Judgement) -> None:
    con.execute("INSERT OR REPLACE INTO verdicts VALUES (?, ?, ?, ?, ?, ?, ?)",
                [j.change_id, j.run_id, j.iteration, PAIRED_TRIAL, j.outcome, j.decision,
                 j.model_dump_json()])


def index_revert(con: duckdb.DuckDBPyConnection, run_id: str, r: RevertRecord) -> None:
    con.execute("INSERT OR REPLACE INTO reverts VALUES (?, ?, ?, ?, ?, ?, ?, ?)",
                [r.change_id, run_id, r.iteration or 0, r.commit, r.revert_commit, r.reason,
                 r.cascaded_from, r.manual])


def index_exam(con: duckdb.DuckDBPyConnection, exam: ExamRecord) -> None:
    con.execute("INSERT OR REPLACE INTO exams VALUES (?, ?, ?, ?, ?, ?)",
                [exam.exam_id, exam.run_id, exam.iteration, exam.finished_at,
                 exam.verdict_line(), exam.model_dump_json()])


def index_all(con: duckdb.DuckDBPyConnection, run: RunRecord, phases: Iterable[PhaseRecord],
              manifests: Iterable[IterationManifest], judgements: Iterable[Judgement],
              reverts: Iterable[RevertRecord], exams: Iterable[ExamRecord] = ()) -> None:
    """Every record, in one transaction (the records are the truth; this is their index)."""
    with transaction(con):
        index_run(con, run)
        for record in phases:
            index_phase(con, record)
        for manifest in manifests:
            index_changes(con, manifest)
        for judgement in judgements:
            index_judgement(con, judgement)
        for revert in reverts:
            index_revert(con, run.run_id, revert)
        for exam in exams:
            index_exam(con, exam)
