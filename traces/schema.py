"""The DuckDB schema of one run's trace store, versioned. Every later stage reads these tables;
traces/ writes rollouts and events, the run ledger (evolve/ledger) the run's own records (runs,
iterations, changes, verdicts, reverts, exams), which it keeps as files too: those tables are its
index. An older store is migrated in place when opened (MIGRATIONS), so it stays readable."""
from __future__ import annotations

SCHEMA_VERSION = 5

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
    phase VARCHAR NOT NULL,          -- EVAL INGEST DISTILL EVOLVE COMMIT TRIAL REVERT
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
    split VARCHAR NOT NULL,          -- train | validation | heldout
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
    node VARCHAR NOT NULL DEFAULT '', -- the machine (and Ray node) that ran it
    trial_change VARCHAR NOT NULL DEFAULT '', -- the change whose trial ran it ('' = an evaluation)
    trial_arm VARCHAR NOT NULL DEFAULT '',    -- base | change (the trial's two trees); '' = an evaluation
    -- Its model calls summed (version 4): where its model time went. NULL: no call reported it.
    model_calls INTEGER DEFAULT 0,
    model_s DOUBLE DEFAULT 0,        -- wall time inside model calls
    tokens_read BIGINT,              -- prompt tokens the server processed (prefill)
    tokens_cached BIGINT,            -- prompt tokens taken from its cache
    prefill_s DOUBLE,
    decode_s DOUBLE,
    stalled_calls INTEGER DEFAULT 0, -- calls far slower than their server had been
    stall_s DOUBLE                   -- what they took beyond its best rates (version 5)
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
    -- A model call's timings as its server reported them (version 4); NULL where it did not.
    tokens_read BIGINT,
    tokens_cached BIGINT,
    prefill_ms DOUBLE,
    decode_ms DOUBLE,
    stalled BOOLEAN DEFAULT false,
    stall_ms DOUBLE,                 -- a stalled call's time beyond its best rates (version 5)
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
-- The judgement of a change, made in the TRIAL phase of the iteration that made it; detail = the
-- whole judgement (the two trees compared, the base's history, the trial's verdict: statistics,
-- every task's counts, rollouts spent).
CREATE TABLE IF NOT EXISTS verdicts (
    change_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the iteration whose TRIAL phase judged it
    method VARCHAR NOT NULL,         -- the verdict method: paired-trial
    verdict VARCHAR NOT NULL,        -- effective not_shown regression untestable
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
-- One row per final exam (evolve/evaluate/exam.py); its rollouts are in the exam's own store.
CREATE TABLE IF NOT EXISTS exams (
    exam_id VARCHAR PRIMARY KEY,
    run_id VARCHAR NOT NULL,
    iteration INTEGER NOT NULL,      -- the last evaluated iteration when it ran
    finished_at DOUBLE NOT NULL,
    verdict VARCHAR NOT NULL,        -- the final (else best) harness against the seed, in words
    detail JSON NOT NULL             -- the whole record: arms, per-task counts, intervals
);
"""

# From a version to the next: what turns an older store into this one (columns added with the
# defaults an old row reads as), applied in one transaction when the store is opened.
MIGRATIONS: dict[int, str] = {
    3: """
ALTER TABLE rollouts ADD COLUMN model_calls INTEGER DEFAULT 0;
ALTER TABLE rollouts ADD COLUMN model_s DOUBLE DEFAULT 0;
ALTER TABLE rollouts ADD COLUMN tokens_read BIGINT;
ALTER TABLE rollouts ADD COLUMN tokens_cached BIGINT;
ALTER TABLE rollouts ADD COLUMN prefill_s DOUBLE;
ALTER TABLE rollouts ADD COLUMN decode_s DOUBLE;
ALTER TABLE rollouts ADD COLUMN stalled_calls INTEGER DEFAULT 0;
ALTER TABLE events ADD COLUMN tokens_read BIGINT;
ALTER TABLE events ADD COLUMN tokens_cached BIGINT;
ALTER TABLE events ADD COLUMN prefill_ms DOUBLE;
ALTER TABLE events ADD COLUMN decode_ms DOUBLE;
ALTER TABLE events ADD COLUMN stalled BOOLEAN DEFAULT false;
""",
    # NULL in the rows of older versions: how long their stalled calls lost was not measured.
    4: """
ALTER TABLE rollouts ADD COLUMN stall_s DOUBLE;
ALTER TABLE events ADD COLUMN stall_ms DOUBLE;
""",
}
