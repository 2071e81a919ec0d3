"""The read-only SQL tool (the evolve agent's and `traces sql`'s): one SELECT at a time, no file or
network access, a row cap and a time limit; optionally only the train split's rows exist for it."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel

from evoharness.errors import EvoError

from .schema import TABLES
from .store import READ_WAIT_S, TraceStore, connect

# No file, extension or network access, and queries cannot switch that back on.
LOCKED = {"enable_external_access": False, "lock_configuration": True}
CELL_LIMIT = 200  # characters of one value in the text rendering


class SqlError(EvoError):
    """A refused or failed query; the message is written for the agent (or user) that sent it."""


class SqlResult(BaseModel):
    columns: list[str]
    rows: list[list[Any]]
    cut: int = 0  # rows beyond the cap, counted but not returned

    def text(self) -> str:
        """A plain-text table for a model to read, saying how many rows were cut."""
        cells = [[_cell(v) for v in row] for row in self.rows]
        widths = [max([len(c)] + [len(row[i]) for row in cells])
                  for i, c in enumerate(self.columns)]
        lines = [" | ".join(c.ljust(w) for c, w in zip(self.columns, widths)),
                 "-+-".join("-" * w for w in widths)]
        lines += [" | ".join(v.ljust(w) for v, w in zip(row, widths)) for row in cells]
        lines.append(f"({len(self.rows)} row(s)" + (f"; {self.cut} more cut by the row cap)"
                                                    if self.cut else ")"))
        return "\n".join(lines)


def _cell(value: Any) -> str:
    text = "NULL" if value is None else str(value)
    return text if len(text) <= CELL_LIMIT else text[:CELL_LIMIT] + "…"


def check_select(query: str) -> str:
    """Return the query if it is exactly one read-only statement, else raise SqlError saying why."""
    try:
        statements = duckdb.extract_statements(query)
    except duckdb.Error as error:
        raise SqlError(f"not valid SQL: {error}", field="query", value=query) from error
    if len(statements) != 1:
        raise SqlError(f"send exactly one statement (got {len(statements)})", field="query",
                       value=query, hint="Run the statements one at a time")
    kind = statements[0].type
    if kind != duckdb.StatementType.SELECT:
        raise SqlError(f"only read-only queries are allowed, not {kind.name}", field="query",
                       value=query, hint="Use SELECT, WITH, DESCRIBE, SHOW or SUMMARIZE")
    return query


class SqlTool:
    """A read-only query session on one trace database. With `restrict_to_split` it queries an
    in-memory snapshot holding only that split's rollouts and their events, so other rows (the
    held-out tasks) are not hidden by a filter the query could get around: they are not there."""

    def __init__(
        self, source: str | Path | TraceStore, *, restrict_to_split: str | None = None
    ) -> None:
        if isinstance(source, TraceStore) or restrict_to_split is not None:
            self.con = _snapshot(source, restrict_to_split)
        else:
            self.con = _open_locked(Path(source))

    def close(self) -> None:
        self.con.close()

    def __enter__(self) -> SqlTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, query: str, *, max_rows: int = 200, timeout_s: float = 5.0) -> SqlResult:
        check_select(query)
        timer = threading.Timer(timeout_s, self.con.interrupt)
        timer.start()
        try:
            return _fetch(self.con, query, max_rows)
        except duckdb.InterruptException as error:
            raise SqlError(f"query stopped at the {timeout_s:g} s time limit", field="query",
                           value=query, hint="Aggregate or filter more, or add a LIMIT") from error
        except duckdb.Error as error:
            raise SqlError(f"query failed: {error}", field="query", value=query) from error
        finally:
            timer.cancel()


def run_readonly_sql(
    source: str | Path | TraceStore,
    query: str,
    *,
    max_rows: int = 200,
    timeout_s: float = 5.0,
    restrict_to_split: str | None = None,
) -> SqlResult:
    """One query in a fresh read-only session (see SqlTool for a session that serves many)."""
    check_select(query)  # refuse before paying for a snapshot
    with SqlTool(source, restrict_to_split=restrict_to_split) as tool:
        return tool.run(query, max_rows=max_rows, timeout_s=timeout_s)


def _fetch(con: duckdb.DuckDBPyConnection, query: str, max_rows: int) -> SqlResult:
    """Stream the result: keep the first max_rows rows, only count the rest."""
    reader = con.sql(query).to_arrow_reader(1024)
    rows: list[list[Any]] = []
    cut = 0
    for batch in reader:
        room = max(max_rows - len(rows), 0)
        rows += [list(row.values()) for row in batch.slice(0, room).to_pylist()]
        cut += max(batch.num_rows - room, 0)
    return SqlResult(columns=list(reader.schema.names), rows=rows, cut=cut)


def _open_locked(path: Path) -> duckdb.DuckDBPyConnection:
    TraceStore(path, read_only=True).close()  # the version check and its clear errors
    try:  # waits, like every reader, while a running evolve writes
        return connect(path, read_only=True, wait_s=READ_WAIT_S, config=LOCKED)
    except duckdb.Error as error:
        raise SqlError(f"cannot open the trace database read-only: {error}", file=path,
                       hint="Pass the open TraceStore if this process already holds it") from error


def _snapshot(source: str | Path | TraceStore, split: str | None) -> duckdb.DuckDBPyConnection:
    """An in-memory, locked database whose tables are Arrow copies of the allowed rows."""
    tables = _read_tables(source, split)
    con = duckdb.connect(config=LOCKED)
    for name, table in tables.items():
        con.register(name, table)
    return con


def _read_tables(source: str | Path | TraceStore, split: str | None) -> dict[str, pa.Table]:
    if split not in (None, "train", "heldout"):
        raise SqlError("unknown split", field="restrict_to_split", value=split,
                       hint="Use train or heldout")
    own = not isinstance(source, TraceStore)
    store = TraceStore(source, read_only=True) if own else source
    try:
        with store.con.cursor() as cursor:
            return {name: _allowed_rows(cursor, name, split) for name in TABLES}
    finally:
        if own:
            store.close()


def _allowed_rows(cursor: duckdb.DuckDBPyConnection, table: str, split: str | None) -> pa.Table:
    """The table's rows, or for rollouts and events only those of the split's rollouts."""
    if split is None or table not in ("rollouts", "events"):
        return cursor.sql(f"SELECT * FROM {table}").to_arrow_table()
    query = (f"SELECT * FROM {table} WHERE rollout_id IN "
             "(SELECT rollout_id FROM rollouts WHERE split = ?)")
    return cursor.sql(query, params=[split]).to_arrow_table()
