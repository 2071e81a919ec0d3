"""The DuckDB schema of one run's trace store, versioned. Every later stage reads these tables;
only traces/ (and manifests/ for changes and verdicts, evolve/ for phases) write them."""
from __future__ import annotations

SCHEMA_VERSION = 1

# The loop's phases in order; `iterations.phase` holds one of these.
PHASES = ("EVAL", "INGEST", "ATTRIBUTE", "REVERT", "DISTILL", "EVOLVE", "COMMIT")

# Every table of the schema, in dependency order (export and the SQL tool's snapshot use it).
TABLES = ("meta", "runs", "iterations", "rollouts", "events", "changes", "verdicts")

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
    detail JSON,
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
    node VARCHAR DEFAULT ''          -- the machine (and Ray node) that ran it
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
-- The judgement of a change, made in the ATTRIBUTE phase of the next iteration (or by hand).
CREATE TABLE IF NOT EXISTS verdicts (
    change_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the iteration whose evaluation judged it
    verdict VARCHAR NOT NULL,        -- effective partial ineffective harmful mixed manual
    decision VARCHAR NOT NULL,       -- keep | revert
    revert_commit VARCHAR,
    detail JSON NOT NULL
);
"""

# Columns added within this schema version, for stores created before them (additive only: an
# older evoharness reading a newer store ignores them).
ADDED_COLUMNS = """
ALTER TABLE rollouts ADD COLUMN IF NOT EXISTS node VARCHAR DEFAULT '';
"""
