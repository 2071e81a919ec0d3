"""The trace store: one run's DuckDB file, opened with a schema-version check (an older version is
migrated first) and briefly (a reader retries while a writer holds it, and the other way round),
checked for damage, and the rollouts' ingestion and export. Ingestion lives in ingest.py, reads in queries.py, the run's own records
(phases, changes, judgements, reverts) in the run ledger (evolve/ledger)."""
from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

import duckdb

from evoharness.errors import EvoError

from .connection import READ_WAIT_S, StoreDamaged, connect
from .ingest import IngestReport, ingest_paths, trace_files, transaction
from .schema import DDL, MIGRATIONS, SCHEMA_VERSION, TABLES

WRITE_WAIT_S = 600.0  # a writer waits this long for readers (a `traces sql` query may take 60 s)


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
        self.con = self._open(read_only, wait)
        if self.con is None:  # an older store: migrated by a short write, then read
            TraceStore(self.path, wait_s=wait).close()
            self.con = self._open(read_only, wait)
        if self.con is None:
            raise EvoError("the trace database was not migrated", file=self.path)

    def _open(self, read_only: bool, wait_s: float) -> duckdb.DuckDBPyConnection | None:
        """The connection, its schema checked; None when a reader found an older version."""
        con = connect(self.path, read_only=read_only, wait_s=wait_s)
        try:
            if _check_or_create_schema(con, self.path, read_only):
                return con
        except BaseException:
            con.close()
            raise
        con.close()
        return None

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


def _check_or_create_schema(con: duckdb.DuckDBPyConnection, path: Path, read_only: bool) -> bool:
    """Refuse a database of a version we cannot read (or not ours) before touching it; migrate an
    older one when writing. False: an older version, opened read-only (to be migrated first)."""
    tables = {row[0] for row in con.execute(
        "SELECT table_name FROM duckdb_tables() WHERE database_name = current_database()"
    ).fetchall()}
    if not tables and not read_only:
        with transaction(con):
            con.execute(DDL)
            con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        return True
    found = None
    if "meta" in tables:
        rows = con.execute("SELECT value FROM meta WHERE key = 'schema_version'").fetchall()
        found = rows[0][0] if rows else None
    if found in _MIGRATABLE:
        if read_only:
            return False
        _migrate(con, int(found))
    elif found != str(SCHEMA_VERSION):
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
    return True


# Every version a chain of MIGRATIONS leads from to this one.
_MIGRATABLE = {str(v) for v in MIGRATIONS if all(n in MIGRATIONS for n in range(v, SCHEMA_VERSION))}


def _migrate(con: duckdb.DuckDBPyConnection, version: int) -> None:
    """Bring a store of `version` up to SCHEMA_VERSION, all steps in one transaction."""
    with transaction(con):
        for step in range(version, SCHEMA_VERSION):
            con.execute(MIGRATIONS[step])
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(SCHEMA_VERSION)])
