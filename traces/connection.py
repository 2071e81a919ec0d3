"""Opening a trace database: duckdb.connect, waiting while another process holds the file the other
way, with errors that say which. Light on imports (DuckDB only), so a query's child process
(sql_child.py) opens the store as every reader does."""
from __future__ import annotations

import time
from pathlib import Path
from typing import Any

import duckdb

from evoharness.errors import EvoError

READ_WAIT_S = 60.0  # a reader waits this long for a writer's transaction (an ingest batch)
_FIRST_BACKOFF_S = 0.01
_MAX_BACKOFF_S = 0.5


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
