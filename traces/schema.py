"""The DuckDB schema of one run's trace store, versioned. Every later stage reads these tables;
traces/ writes rollouts and events, the run ledger (evolve/ledger) the run's own records (runs,
iterations, changes, verdicts, reverts, exams), which it keeps as files too: those tables are its
index."""
from __future__ import annotations

SCHEMA_VERSION = 2

# Every table of the schema, in dependency order (export and the SQL tool's snapshot use it).
TABLES = ("meta", "runs", "iterations", "rollouts", "events", "changes", "verdicts", "reverts",
          "exams")

DDL = """
CREATE TABLE IF NOT EXISTS meta (
    key VARCHAR PRIMARY KEY,
    value VARCHAR NOT NULL
);
CREATE TABLE IF NOT EXISTS runs (
    run_id VARCHAR PRIMARY KEY,
    created_at DOUBLE NOT NULL,
    config JSON NOT NULL
);
-- One row per finished phase; the loop resumes after the last one.
CREATE TABLE IF NOT EXISTS iterations (
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,
    phase VARCHAR NOT NULL,          -- EVAL INGEST ATTRIBUTE REVERT DISTILL EVOLVE COMMIT
    harness_commit VARCHAR,
    finished_at DOUBLE NOT NULL,
    detail JSON,                     -- the phase's result, and its seconds
    PRIMARY KEY (run_id, iteration, phase)
);
CREATE TABLE IF NOT EXISTS rollouts (
    rollout_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,
    task_id VARCHAR NOT NULL,
    split VARCHAR NOT NULL,          -- train | heldout
    attempt INTEGER NOT NULL,
    harness_commit VARCHAR NOT NULL,
    model VARCHAR NOT NULL,
    outcome VARCHAR NOT NULL,        -- pass | fail | timeout | infra_error
    reward DOUBLE NOT NULL,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    steps INTEGER NOT NULL,
    duration_s DOUBLE NOT NULL,
    exit_reason VARCHAR NOT NULL,
    verifier_tail VARCHAR NOT NULL,
    started_at DOUBLE NOT NULL,
    node VARCHAR NOT NULL DEFAULT '' -- the machine (and Ray node) that ran it
);
CREATE TABLE IF NOT EXISTS events (
    rollout_id VARCHAR NOT NULL,
    seq INTEGER NOT NULL,
    kind VARCHAR NOT NULL,           -- model_call tool_call tool_result middleware error note
    name VARCHAR NOT NULL,
    content VARCHAR NOT NULL,
    data JSON NOT NULL,
    tokens_in BIGINT NOT NULL,
    tokens_out BIGINT NOT NULL,
    duration_ms DOUBLE NOT NULL,
    ts DOUBLE NOT NULL,
    PRIMARY KEY (rollout_id, seq)
);
-- One row per change-manifest entry (the pre-registered prediction); manifest = the whole entry.
CREATE TABLE IF NOT EXISTS changes (
    change_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the iteration whose EVOLVE phase made it
    component VARCHAR NOT NULL,
    commit VARCHAR NOT NULL,
    manifest JSON NOT NULL
);
-- The judgement of a change, made in the ATTRIBUTE phase of the next iteration; detail = the
-- whole judgement (every task's counts and class, the method's statistics, rollouts spent).
CREATE TABLE IF NOT EXISTS verdicts (
    change_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the iteration whose evaluation judged it
    method VARCHAR NOT NULL,         -- the verdict method, e.g. threshold-rule
    verdict VARCHAR NOT NULL,        -- effective partial ineffective harmful mixed
    decision VARCHAR NOT NULL,       -- keep | revert
    detail JSON NOT NULL
);
-- One row per reverted change (by its verdict, by a cascade, or by hand with `rollback`).
CREATE TABLE IF NOT EXISTS reverts (
    change_id VARCHAR PRIMARY KEY,   -- a change id, or the first 12 hex digits of an unregistered commit
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,
    commit VARCHAR NOT NULL,
    revert_commit VARCHAR NOT NULL,
    reason VARCHAR NOT NULL,
    cascaded_from VARCHAR,
    manual BOOLEAN NOT NULL
);
-- One row per final exam (evolve/exam.py); its rollouts are in the exam's own store.
CREATE TABLE IF NOT EXISTS exams (
    exam_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the last evaluated iteration when it ran
    finished_at DOUBLE NOT NULL,
    verdict VARCHAR NOT NULL,        -- the final (else best) harness against the seed, in words
    detail JSON NOT NULL             -- the whole record: arms, per-task counts, intervals
);
"""
