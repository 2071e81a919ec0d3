"""The trace store: one run's DuckDB file, opened with a schema-version check, plus the run and
phase bookkeeping the loop resumes from. Ingestion lives in ingest.py, reads in queries.py."""
from __future__ import annotations

import json
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from evoharness.errors import EvoError

from .ingest import IngestReport, ingest_paths, trace_files, transaction
from .schema import ADDED_COLUMNS, DDL, PHASES, SCHEMA_VERSION, TABLES

DB_NAME = "traces.duckdb"  # the agreed place of a run's store: RUN_DIR/traces.duckdb


def db_path(run_dir: str | Path) -> Path:
    return Path(run_dir) / DB_NAME


class TraceStore:
    """An open trace database; use as a context manager so the file is closed (and unlocked)."""

    def __init__(self, path: str | Path, *, read_only: bool = False) -> None:
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise EvoError("no trace database here", file=self.path, hint="Run an evaluation first")
        self.con = _connect(self.path, read_only)
        try:
            _check_or_create_schema(self.con, self.path, read_only)
        except BaseException:
            self.con.close()
            raise

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> TraceStore:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # -- ingestion ------------------------------------------------------------------------------
    def ingest_dir(self, directory: str | Path) -> IngestReport:
        """Ingest every rollout trace file in `directory` (not its quarantine/ folder)."""
        return ingest_paths(self.con, trace_files(directory))

    def ingest_files(self, paths: Iterable[str | Path]) -> IngestReport:
        return ingest_paths(self.con, [Path(p) for p in paths])

    def stored_rollout_ids(self, run_id: str) -> set[str]:
        rows = self.con.execute("SELECT rollout_id FROM rollouts WHERE run_id = ?", [run_id])
        return {row[0] for row in rows.fetchall()}

    def export_parquet(self, directory: str | Path) -> list[Path]:
        """Write one Parquet file per table into `directory` (created if needed)."""
        directory = Path(directory)
        directory.mkdir(parents=True, exist_ok=True)
        written = []
        for table in TABLES:
            target = directory / f"{table}.parquet"
            quoted = str(target).replace("'", "''")
            self.con.execute(f"COPY {table} TO '{quoted}' (FORMAT PARQUET)")
            written.append(target)
        return written

    # -- runs and phases ------------------------------------------------------------------------
    def register_run(self, run_id: str, config: dict[str, Any]) -> None:
        """Record a run once; a resumed run keeps its original config and creation time."""
        self.con.execute(
            "INSERT INTO runs VALUES (?, ?, ?) ON CONFLICT DO NOTHING",
            [run_id, time.time(), json.dumps(config, sort_keys=True)],
        )

    def mark_phase(
        self,
        run_id: str,
        iteration: int,
        phase: str,
        harness_commit: str | None = None,
        detail: dict[str, Any] | None = None,
    ) -> None:
        """Record `phase` of `iteration` as finished; marking it again keeps the first record."""
        if phase not in PHASES:
            raise EvoError("unknown phase", field="phase", value=phase, hint=f"Use one of {PHASES}")
        self.con.execute(
            "INSERT INTO iterations VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT DO NOTHING",
            [run_id, iteration, phase, harness_commit, time.time(),
             None if detail is None else json.dumps(detail, sort_keys=True)],
        )

    def phases_done(self, run_id: str, iteration: int) -> set[str]:
        rows = self.con.execute(
            "SELECT phase FROM iterations WHERE run_id = ? AND iteration = ?", [run_id, iteration]
        )
        return {row[0] for row in rows.fetchall()}

    def last_phase(self, run_id: str) -> tuple[int, str] | None:
        """The latest finished (iteration, phase) in phase order, or None for a fresh run."""
        rows = self.con.execute(
            "SELECT iteration, phase FROM iterations WHERE run_id = ? "
            "ORDER BY iteration DESC, list_position(?, phase) DESC LIMIT 1",
            [run_id, list(PHASES)],
        ).fetchall()
        return (rows[0][0], rows[0][1]) if rows else None


class StoreBusy(EvoError):
    """Another process (a running `evoharness evolve`) holds the store: DuckDB allows one writer
    process and no readers beside it."""


def _connect(path: Path, read_only: bool) -> duckdb.DuckDBPyConnection:
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    try:
        return duckdb.connect(str(path), read_only=read_only)
    except duckdb.IOException as error:
        if "Conflicting lock" not in str(error):
            raise EvoError(f"cannot open the trace database: {error}", file=path) from error
        raise StoreBusy("another evoharness process is using the trace database", file=path,
                        value=str(error).split("Conflicting lock is held in ")[-1][:120],
                        hint="wait for it to finish, or stop it") from error
    except duckdb.Error as error:
        raise EvoError(
            f"cannot open the trace database: {error}",
            file=path,
            hint="Is it a DuckDB file, and is no other evoharness process writing to it?",
        ) from error


def _check_or_create_schema(con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> None:
    """Refuse a database of another schema version (or not ours) before touching it."""
    tables = {row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchall()}
    if not tables and not read_only:
        with transaction(con):
            con.execute(DDL)
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        return
    found = None
    if "meta" in tables:
        rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        found = rows[0][0] if rows else None
    if found != str(SCHEMA_VERSION):
        raise EvoError(
            f"trace database has schema version {found or 'none (not an evoharness database)'}, "
            f"this evoharness needs version {SCHEMA_VERSION}",
            file=path,
            field="meta.schema_version",
            value=found,
            hint="Use the evoharness release that wrote it, or start a new run directory",
        )
    if not read_only:
        con.execute(DDL)  # IF NOT EXISTS: adds tables and indexes added within this version
        con.execute(ADDED_COLUMNS)
