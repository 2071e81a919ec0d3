"""The child process that runs one read-only query: DuckDB under an address-space and CPU limit,
because DuckDB's own memory_limit does not bound every allocation (a string_agg grew to 3.5 GB
under a 512 MB limit). Run by sql_tool.py, which checks the statement first and owns the
snapshot and the wall-clock safety net.

Reads {"db", "query", "max_rows", "timeout_s", "wait_s"} as JSON on stdin; writes {"columns",
"rows", "cut"} or {"error": {"kind", "message"}} on stdout. Imports DuckDB and little else, so a
query costs one interpreter start."""
from __future__ import annotations

import json
import resource
import sys
import threading
from pathlib import Path
from typing import Any

import duckdb

from evoharness.errors import EvoError
from evoharness.traces.connection import connect

# Every session: no file, extension or network access, no spilling to disk, bounded memory and
# threads; then lock_configuration, so a query cannot switch any of it back.
THREADS = 2
SESSION_CONFIG = {"enable_external_access": False, "memory_limit": "512MB", "threads": THREADS,
                  "temp_directory": ""}
SESSION_SETTINGS = ("SET enable_progress_bar = false",)  # local options, set before the lock
MEMORY_BYTES = 1536 << 20  # DuckDB's 512 MB, the interpreter, and the rows kept
ERROR_CHARS = 1000
FETCH_BATCH = 1024


def answer(request: dict[str, Any]) -> dict[str, Any]:
    """The query's first max_rows rows and the count of the rest, or the error, for the parent."""
    try:
        con = connect(Path(request["db"]), read_only=True, wait_s=request["wait_s"],
                      config=SESSION_CONFIG)
    except EvoError as error:
        return _error("open", f"cannot open the trace database read-only: {error.message}")
    timer = threading.Timer(request["timeout_s"], con.interrupt)
    try:
        _lock(con)
        timer.start()
        return _fetch(con, request["query"], request["max_rows"])
    except duckdb.InterruptException:
        return _error("timeout", "time limit")
    except duckdb.Error as error:
        return _error("query", f"query failed: {error}")
    except MemoryError:
        return _error("query", f"query failed: it needs more than {MEMORY_BYTES >> 20} MB")
    finally:
        timer.cancel()
        con.close()


def _lock(con: duckdb.DuckDBPyConnection) -> None:
    for setting in SESSION_SETTINGS:
        con.execute(setting)
    con.execute("SET lock_configuration = true")


def _fetch(con: duckdb.DuckDBPyConnection, query: str, max_rows: int) -> dict[str, Any]:
    """Stream the result: keep the first max_rows rows, only count the rest."""
    cursor = con.execute(query)
    columns = [column[0] for column in cursor.description]
    rows = [list(row) for row in cursor.fetchmany(max_rows)] if max_rows > 0 else []
    cut = 0
    while batch := cursor.fetchmany(FETCH_BATCH):
        cut += len(batch)
    return {"columns": columns, "rows": rows, "cut": cut}


def _error(kind: str, message: str) -> dict[str, Any]:
    return {"error": {"kind": kind, "message": message[:ERROR_CHARS]}}


def _json(reply: dict[str, Any]) -> str:
    """Values JSON has no type for (dates, decimals, blobs) as their text, which is what the
    table rendering shows of them anyway."""
    try:
        return json.dumps(reply, default=str)
    except (TypeError, ValueError):  # e.g. a MAP whose keys are not strings or numbers
        reply["rows"] = [[str(value) for value in row] for row in reply["rows"]]
        return json.dumps(reply)


def main() -> None:
    request = json.load(sys.stdin)
    # After the imports and the request: the limits are for what the query does. CPU time is the
    # wall-clock limit on every thread, and then some, so the timer interrupts first.
    cpu_seconds = int(request["timeout_s"] * THREADS) + 10
    resource.setrlimit(resource.RLIMIT_AS, (MEMORY_BYTES, MEMORY_BYTES))
    resource.setrlimit(resource.RLIMIT_CPU, (cpu_seconds, cpu_seconds))
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, 0))  # it writes nothing but its answer (a pipe)
    sys.stdout.write(_json(answer(request)))


if __name__ == "__main__":
    main()
