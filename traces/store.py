"""The trace store: one run's DuckDB file, opened with a schema-version check and briefly (a reader
retries while a writer holds it, and the other way round), checked for damage, and the rollouts'
ingestion and export. Ingestion lives in ingest.py, reads in queries.py, the run's own records
(phases, changes, judgements, reverts) in the run ledger (evolve/ledger)."""
from __future__ import annotations

import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import duckdb

from evoharness.errors import EvoError

from .ingest import IngestReport, ingest_paths, trace_files, transaction
from .schema import DDL, SCHEMA_VERSION, TABLES

READ_WAIT_S = 60.0  # a reader waits this long for a writer's transaction (an ingest batch)
WRITE_WAIT_S = 600.0  # a writer waits this long for readers (a `traces sql` query may take 60 s)
_FIRST_BACKOFF_S = 0.01
_MAX_BACKOFF_S = 0.5


class TraceStore:
    """An open trace database; use as a context manager so the file is closed (and unlocked) soon:
    DuckDB lets one process write, or any number read, but never both at once. Opening waits (up
    to `wait_s`) while another process holds the file the other way."""

    def __init__(self, path: str | Path, *, read_only: bool = False,
                 wait_s: float | None = None) -> None:
        self.path = Path(path)
        if read_only and not self.path.exists():
            raise EvoError("no trace database here", file=self.path, hint="Run an evaluation first")
        wait = wait_s if wait_s is not None else READ_WAIT_S if read_only else WRITE_WAIT_S
        self.con = connect(self.path, read_only=read_only, wait_s=wait)
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

    def verify(self) -> None:
        """Read every stored value of every table; a damaged file raises StoreDamaged. DuckDB
        checks a block's checksum only when it reads the block, so nothing less finds all damage."""
        for table in TABLES:
            try:
                self.con.execute(f"SELECT count(*), bit_xor(hash(COLUMNS(*))) FROM {table}")
                self.con.fetchall()
            except duckdb.Error as error:
                raise StoreDamaged(f"the trace database is damaged ({table}): {error}",
                                   file=self.path) from error


class StoreBusy(EvoError):
    """Another process held the store the other way (writing while we read, or reading while we
    write) for longer than we waited."""


class StoreDamaged(EvoError):
    """The DuckDB file is corrupt (e.g. a checksum mismatch after a crash). The run ledger rebuilds
    it from the run's files."""


def connect(path: Path, *, read_only: bool, wait_s: float,
            config: dict[str, Any] | None = None) -> duckdb.DuckDBPyConnection:
    """duckdb.connect, retried with exponential backoff while another process holds a conflicting
    lock, for up to `wait_s` seconds."""
    if not read_only:
        path.parent.mkdir(parents=True, exist_ok=True)
    deadline = time.monotonic() + wait_s
    backoff = _FIRST_BACKOFF_S
    while True:
        try:
            return duckdb.connect(str(path), read_only=read_only, config=config or {})
        except duckdb.IOException as error:
            if "Conflicting lock" not in str(error):
                raise EvoError(f"cannot open the trace database: {error}", file=path) from error
            if time.monotonic() + backoff > deadline:
                raise StoreBusy(
                    f"another evoharness process held the trace database for {wait_s:.0f}s",
                    file=path, value=str(error).split("Conflicting lock is held in ")[-1][:120],
                    hint="try again; a running evolve holds it only while it writes") from error
            time.sleep(backoff)
            backoff = min(2 * backoff, _MAX_BACKOFF_S)
        except duckdb.Error as error:
            kind = StoreDamaged if "Corrupt" in str(error) or "checksum" in str(error) else EvoError
            raise kind(
                f"cannot open the trace database: {error}", file=path,
                hint="Is it a DuckDB file? `evoharness traces rebuild RUN` rebuilds a run's store "
                     "from its files",
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
