"""The read-only SQL tool (the evolve agent's and `traces sql`'s): one SELECT at a time, each in a
child process with no file or network access, bounded memory, CPU and threads (sql_child.py), a
row cap and a time limit. Restricted to a split, it queries a snapshot that holds only what the
evidence may show (RESTRICTED_VIEW), redacted by the debugger's leak guard."""
from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
import re2
from pydantic import BaseModel

from evoharness.traces.leak import FAILING_LINE_REGEX, Redactor, snippets
from evoharness.errors import EvoError

from .connection import READ_WAIT_S
from .schema import TABLES
from .sql_child import MEMORY_BYTES
from .store import TraceStore

CHILD_SLACK_S = 60.0  # start-up on a loaded machine; the child's own timer ends a query first
CELL_LIMIT = 200  # characters of one value in the text rendering
VERIFIER_LINES = 20  # failing verifier lines kept per rollout, as the evidence keeps them


@dataclass(frozen=True)
class TableView:
    """What a restricted session sees of one stored table: these columns (name -> SQL expression
    over the stored row), the rows matching `rows` ($split is the allowed split), and the columns
    in `redacted` passed through the leak guard."""

    columns: dict[str, str]
    rows: str = "TRUE"
    redacted: tuple[str, ...] = ()


def _view(*same: str, rows: str = "TRUE", redacted: tuple[str, ...] = (), **derived: str
          ) -> TableView:
    return TableView(columns={name: name for name in same} | derived, rows=rows, redacted=redacted)


_SPLIT_ROLLOUTS = "rollout_id IN (SELECT rollout_id FROM rollouts WHERE split = $split)"
# The verifier's output only as the evidence shows it: its failing lines (pytest's echo of the
# hidden test source never qualifies), at most VERIFIER_LINES, then redacted.
_FAILING_LINES = (
    "array_to_string(list_filter(string_split(replace(verifier_tail, chr(13), ''), chr(10)), "
    f"lambda l: regexp_matches(l, '{FAILING_LINE_REGEX}'))[1:{VERIFIER_LINES}], chr(10))"
)
# Allowlisted by design: a column or table not named here does not exist for a restricted query.
# Dropped: runs.config (names the held-out tasks and the suite's files), iterations.detail (phase
# records name held-out rollouts and quarantined files), rollouts.verifier_tail (raw output).
# Kept: rollouts.node (host / Ray node), so failures of one machine read as infrastructure, not as
# the harness's; an infra_error's exit_reason names it anyway.
RESTRICTED_VIEW: dict[str, TableView] = {
    "meta": _view("key", "value"),
    "runs": _view("run_id", "created_at"),
    "iterations": _view("run_id", "iteration", "phase", "harness_commit", "finished_at"),
    "rollouts": _view(
        "rollout_id", "run_id", "iteration", "task_id", "split", "attempt", "harness_commit",
        "model", "outcome", "reward", "tokens_in", "tokens_out", "steps", "duration_s",
        "exit_reason", "started_at", "node", "trial_change", "trial_arm", "model_calls",
        "model_s", "tokens_read", "tokens_cached", "prefill_s", "decode_s", "stalled_calls",
        "stall_s", verifier_lines=_FAILING_LINES, rows="split = $split",
        redacted=("exit_reason", "verifier_lines")),
    "events": _view("rollout_id", "seq", "kind", "name", "content", "data", "tokens_in",
                    "tokens_out", "duration_ms", "ts", "tokens_read", "tokens_cached",
                    "prefill_ms", "decode_ms", "stalled", "stall_ms", rows=_SPLIT_ROLLOUTS,
                    redacted=("content", "data")),
    "changes": _view("change_id", "run_id", "iteration", "component", "commit", "manifest",
                     redacted=("manifest",)),
    "verdicts": _view("change_id", "run_id", "iteration", "method", "verdict", "decision",
                      "detail", redacted=("detail",)),
    "reverts": _view("change_id", "run_id", "iteration", "commit", "revert_commit", "reason",
                     "cascaded_from", "manual", redacted=("reason",)),
}


class SqlError(EvoError):
    """A refused or failed query; the message is written for the agent (or user) that sent it."""

    keeps_lines = True  # DuckDB's caret under the offending part of the query


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
    """A read-only query session on one trace database. With `restrict_to_split` it queries a
    snapshot of RESTRICTED_VIEW: other rows (the held-out tasks) and columns are not hidden by a
    filter the query could get around: they are not there. Its text columns are redacted of the
    ids of every task and rollout outside the split and of `forbidden` strings (the hidden tests'
    lines), as the evidence is. A store this process holds open is queried through a snapshot too
    (DuckDB lets no other process read it meanwhile); a path, in place."""

    def __init__(
        self, source: str | Path | TraceStore, *, restrict_to_split: str | None = None,
        forbidden: Iterable[str] = (),
    ) -> None:
        self._folder: tempfile.TemporaryDirectory[str] | None = None
        self.wait_s = 0.0
        if restrict_to_split is not None:
            self.db = self._snapshot(_restricted_tables(source, restrict_to_split, forbidden))
        elif isinstance(source, TraceStore):
            self.db = self._snapshot(_all_tables(source))
        else:
            self.db, self.wait_s = Path(source), READ_WAIT_S
            TraceStore(self.db, read_only=True).close()  # the version check and its clear errors

    def close(self) -> None:
        if self._folder is not None:
            self._folder.cleanup()

    def __enter__(self) -> SqlTool:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, query: str, *, max_rows: int = 200, timeout_s: float = 5.0) -> SqlResult:
        check_select(query)
        request = {"db": str(self.db), "query": query, "max_rows": max_rows,
                   "timeout_s": timeout_s, "wait_s": self.wait_s}
        try:  # -I: no PYTHON* variables, no working directory on the path
            done = subprocess.run(
                [sys.executable, "-I", "-m", "evoharness.traces.sql_child"], input=json.dumps(request),
                capture_output=True, text=True, timeout=self.wait_s + timeout_s + CHILD_SLACK_S)
        except subprocess.TimeoutExpired as error:
            raise _time_limit(query, timeout_s) from error
        if done.returncode != 0:
            raise SqlError(
                f"the query's process ended with exit status {done.returncode}: "
                f"{done.stderr.strip()[-300:]}", field="query", value=query,
                hint=f"A query may use {MEMORY_BYTES >> 20} MB; aggregate or filter more")
        reply = json.loads(done.stdout)
        if "error" not in reply:
            return SqlResult(**reply)
        if reply["error"]["kind"] == "timeout":
            raise _time_limit(query, timeout_s)
        if reply["error"]["kind"] == "open":
            raise SqlError(reply["error"]["message"], file=self.db)
        raise SqlError(reply["error"]["message"], field="query", value=query)

    def _snapshot(self, tables: dict[str, pa.Table]) -> Path:
        """A private database file whose tables are these Arrow tables, removed by close()."""
        self._folder = tempfile.TemporaryDirectory(prefix="evoharness-sql-")
        path = Path(self._folder.name) / "snapshot.duckdb"
        with duckdb.connect(str(path)) as con:
            for name, table in tables.items():
                con.register("source", table)
                con.execute(f"CREATE TABLE {name} AS SELECT * FROM source")
                con.unregister("source")
        return path


def _time_limit(query: str, timeout_s: float) -> SqlError:
    return SqlError(f"query stopped at the {timeout_s:g} s time limit", field="query",
                    value=query, hint="Aggregate or filter more, or add a LIMIT")


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


def _all_tables(store: TraceStore) -> dict[str, pa.Table]:
    with store.con.cursor() as cursor:
        return {name: cursor.sql(f"SELECT * FROM {name}").to_arrow_table() for name in TABLES}


def _restricted_tables(source: str | Path | TraceStore, split: str,
                       forbidden: Iterable[str]) -> dict[str, pa.Table]:
    if split not in ("train", "heldout"):
        raise SqlError("unknown split", field="restrict_to_split", value=split,
                       hint="Use train or heldout")
    own = not isinstance(source, TraceStore)
    store = TraceStore(source, read_only=True) if own else source
    try:
        with store.con.cursor() as cursor:
            guard = _Guard(_other_ids(cursor, split), list(forbidden))
            return {name: _view_rows(cursor, name, view, split, guard)
                    for name, view in RESTRICTED_VIEW.items()}
    finally:
        if own:
            store.close()


class _Guard:
    """The debugger's leak guard over a snapshot's text. The Redactor decides what is replaced;
    an RE2 set of every hidden string first passes over, in one linear scan, the values that
    contain none of them (nearly all: the Redactor alone tries each string in turn)."""

    def __init__(self, hidden_ids: set[str], forbidden: list[str]) -> None:
        self.redactor = Redactor(hidden_ids, forbidden)
        needles = [*snippets(forbidden), *hidden_ids]
        self.hidden = _literal_set(needles) if needles else None

    def __call__(self, text: str) -> str:
        if self.hidden is None or not self.hidden.Match(text):
            return text
        return self.redactor(text)


def _literal_set(needles: list[str]) -> Any:
    options = re2.Options()
    options.log_errors = False
    options.max_mem = 64 << 20  # a few thousand test lines as one automaton
    found = re2.Set.SearchSet(options)
    for needle in needles:
        found.Add(re2.escape(needle))
    found.Compile()
    return found


def _other_ids(cursor: duckdb.DuckDBPyConnection, split: str) -> set[str]:
    """Task and rollout ids outside the split: a rollout id names its task inside a longer token
    ("it001-<task>-a00"), which the guard's whole-token match of the task id alone would miss."""
    rows = cursor.execute("SELECT task_id, rollout_id FROM rollouts WHERE split <> ?",
                          [split]).fetchall()
    return {item for row in rows for item in row}


def _view_rows(cursor: duckdb.DuckDBPyConnection, table: str, view: TableView, split: str,
               redact: _Guard) -> pa.Table:
    columns = ", ".join(f"{expression} AS {name}" for name, expression in view.columns.items())
    query = f"SELECT {columns} FROM {table} WHERE {view.rows}"
    params = {"split": split} if "$split" in view.rows else {}
    rows = cursor.sql(query, params=params).to_arrow_table()
    for name in view.redacted:
        index = rows.schema.get_field_index(name)
        texts = [None if v is None else redact(v) for v in rows.column(name).to_pylist()]
        rows = rows.set_column(index, name, pa.array(texts, pa.string()))
    return rows
