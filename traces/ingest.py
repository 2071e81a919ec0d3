"""Batched, idempotent ingestion of rollout trace files (RolloutResult JSON) into the trace store:
Arrow tables, one transaction per batch; bad files go to quarantine/. store.py owns the DB."""
from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel, Field, ValidationError
from pydantic_core import to_json

from evoharness.tasks.results import RolloutResult

# Events per transaction: big enough that per-batch overhead vanishes, small enough to bound memory.
BATCH_EVENTS = 200_000
QUARANTINE = "quarantine"

ROLLOUT_SCHEMA = pa.schema([
    ("rollout_id", pa.string()), ("run_id", pa.string()), ("iteration", pa.int32()),
    ("task_id", pa.string()), ("split", pa.string()), ("attempt", pa.int32()),
    ("harness_commit", pa.string()), ("model", pa.string()), ("outcome", pa.string()),
    ("reward", pa.float64()), ("tokens_in", pa.int64()), ("tokens_out", pa.int64()),
    ("steps", pa.int32()), ("duration_s", pa.float64()), ("exit_reason", pa.string()),
    ("verifier_tail", pa.string()), ("started_at", pa.float64()), ("node", pa.string()),
    ("trial_change", pa.string()), ("trial_arm", pa.string()), ("model_calls", pa.int32()),
    ("model_s", pa.float64()), ("tokens_read", pa.int64()), ("tokens_cached", pa.int64()),
    ("prefill_s", pa.float64()), ("decode_s", pa.float64()), ("stalled_calls", pa.int32()),
    ("stall_s", pa.float64()),
])
EVENT_SCHEMA = pa.schema([
    ("rollout_id", pa.string()), ("seq", pa.int32()), ("kind", pa.string()), ("name", pa.string()),
    ("content", pa.string()), ("data", pa.string()), ("tokens_in", pa.int64()),
    ("tokens_out", pa.int64()), ("duration_ms", pa.float64()), ("ts", pa.float64()),
    ("tokens_read", pa.int64()), ("tokens_cached", pa.int64()), ("prefill_ms", pa.float64()),
    ("decode_ms", pa.float64()), ("stalled", pa.bool_()), ("stall_ms", pa.float64()),
])


class Quarantined(BaseModel):
    path: str
    moved_to: str | None  # None when the file could not be moved (it is left where it was)
    reason: str


class IngestReport(BaseModel):
    ingested: int = 0
    skipped_existing: int = 0
    events: int = 0
    quarantined: list[Quarantined] = Field(default_factory=list)


@contextmanager
def transaction(con: duckdb.DuckDBPyConnection) -> Iterator[None]:
    """BEGIN/COMMIT around a block; ROLLBACK on any exception, so no half batch is ever visible."""
    con.execute("BEGIN TRANSACTION")
    try:
        yield
    except BaseException:
        con.execute("ROLLBACK")
        raise
    con.execute("COMMIT")


def trace_files(directory: str | Path) -> list[Path]:
    """The rollout files of a directory, skipping atomic-write temporaries (dot files)."""
    return sorted(p for p in Path(directory).glob("*.json") if not p.name.startswith("."))


def ingest_paths(
    con: duckdb.DuckDBPyConnection, paths: Sequence[Path], *, batch_events: int = BATCH_EVENTS
) -> IngestReport:
    """Ingest `paths`, skipping rollout ids already stored; a bad file is quarantined, not fatal."""
    # A cursor of its own: the caller's unfinished results and transactions are not disturbed.
    with con.cursor() as cursor:
        return _ingest(cursor, paths, batch_events)


def _ingest(
    con: duckdb.DuckDBPyConnection, paths: Sequence[Path], batch_events: int
) -> IngestReport:
    report = IngestReport()
    seen: set[str] = set()
    rollouts: list[pa.Table] = []
    events: list[pa.Table] = []
    pending = 0
    for path in paths:
        try:
            rollout, rollout_events = _read(path)
        except _BadFile as bad:
            report.quarantined.append(quarantine(path, str(bad)))
            continue
        rollout_id = rollout.column("rollout_id")[0].as_py()
        if rollout_id in seen:  # the same rollout twice in one call: keep the first
            report.skipped_existing += 1
            continue
        seen.add(rollout_id)
        rollouts.append(rollout)
        events.append(rollout_events)
        pending += rollout_events.num_rows
        if pending >= batch_events:
            _insert(con, rollouts, events, report)
            rollouts, events, pending = [], [], 0
    if rollouts:
        _insert(con, rollouts, events, report)
    return report


class _BadFile(Exception):
    """A trace file that cannot be ingested; its message is the reason shown in the report."""


def _read(path: Path) -> tuple[pa.Table, pa.Table]:
    """Parse and validate one file into a one-row rollouts table and its events table."""
    try:
        result = RolloutResult.model_validate_json(path.read_bytes())
    except OSError as error:
        raise _BadFile(f"unreadable: {error}") from error
    except ValidationError as error:
        first = error.errors()[0]
        where = ".".join(str(part) for part in first["loc"]) or "file"
        raise _BadFile(f"invalid rollout trace ({error.error_count()} error(s)); "
                       f"{where}: {first['msg']}") from error
    seqs = [event.seq for event in result.events]
    if len(set(seqs)) != len(seqs):
        raise _BadFile("invalid rollout trace: events repeat a seq number")
    try:
        return _rollout_table(result), _events_table(result, seqs)
    except (pa.ArrowInvalid, OverflowError) as error:  # e.g. a number too large for its column
        raise _BadFile(f"invalid rollout trace: {error}") from error


def _rollout_table(result: RolloutResult) -> pa.Table:
    row = (result.model_dump(exclude={"events", "model_time", "left"})
           | result.model_time.model_dump())
    return pa.Table.from_pylist([row], schema=ROLLOUT_SCHEMA)


def _events_table(result: RolloutResult, seqs: list[int]) -> pa.Table:
    # Column-wise list comprehensions: far cheaper than one dict per event.
    events = result.events
    timed = [(i, e.timings) for i, e in enumerate(events) if e.timings is not None]
    columns = {
        "rollout_id": [result.rollout_id] * len(events),
        "seq": seqs,
        "kind": [e.kind for e in events],
        "name": [e.name for e in events],
        "content": [e.content for e in events],
        "data": [to_json(e.data).decode() for e in events],
        "tokens_in": [e.tokens_in for e in events],
        "tokens_out": [e.tokens_out for e in events],
        "duration_ms": [e.duration_ms for e in events],
        "ts": [e.ts for e in events],
        **{name: _sparse(len(events), timed, name) for name in _TIMING_COLUMNS},
    }
    return pa.Table.from_pydict(columns, schema=EVENT_SCHEMA)


_TIMING_COLUMNS = ("tokens_read", "tokens_cached", "prefill_ms", "decode_ms", "stalled",
                   "stall_ms")


def _sparse(n: int, timed: list[tuple[int, Any]], name: str) -> list[Any]:
    """One timing column: the model calls' values, None (false for `stalled`) for other events."""
    column: list[Any] = [False if name == "stalled" else None] * n
    for index, timings in timed:
        column[index] = getattr(timings, name)
    return column


def _insert(
    con: duckdb.DuckDBPyConnection,
    rollouts: list[pa.Table],
    events: list[pa.Table],
    report: IngestReport,
) -> None:
    """One transaction: events first, then their rollouts, both only for ids not yet stored."""
    con.register("incoming_rollouts", pa.concat_tables(rollouts))
    con.register("incoming_events", pa.concat_tables(events))
    try:
        with transaction(con):
            fresh = "rollout_id NOT IN (SELECT rollout_id FROM rollouts)"
            stored_events = con.execute(
                f"INSERT INTO events BY NAME SELECT * FROM incoming_events WHERE {fresh}"
            ).fetchall()[0][0]
            stored = con.execute(
                f"INSERT INTO rollouts BY NAME SELECT * FROM incoming_rollouts WHERE {fresh}"
            ).fetchall()[0][0]
    finally:
        con.unregister("incoming_rollouts")
        con.unregister("incoming_events")
    report.ingested += stored
    report.skipped_existing += len(rollouts) - stored
    report.events += stored_events


def quarantine(path: Path, reason: str) -> Quarantined:
    """Move a bad trace file aside into <its dir>/quarantine/ (never deleted, never overwritten)."""
    folder = path.parent / QUARANTINE
    try:
        folder.mkdir(exist_ok=True)
        target = folder / path.name
        suffix = 0
        while target.exists():
            suffix += 1
            target = folder / f"{path.name}.{suffix}"
        os.rename(path, target)
    except OSError as error:
        return Quarantined(path=str(path), moved_to=None, reason=f"{reason} (not moved: {error})")
    return Quarantined(path=str(path), moved_to=str(target), reason=reason)
