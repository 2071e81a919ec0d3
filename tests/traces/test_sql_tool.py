"""The read-only SQL tool: writes and multi-statements refused, row cap, time limit, held-out rows
invisible under restrict_to_split."""
from __future__ import annotations

import pytest

from evoharness.traces.sql_tool import SqlError, SqlTool, check_select, run_readonly_sql
from evoharness.traces.schema import SCHEMA_VERSION
from evoharness.traces.store import TraceStore

from .helpers import result, write


@pytest.fixture(scope="module")
def db(tmp_path_factory):
    tmp_path = tmp_path_factory.mktemp("sql")
    results = [result(f"t{i}", split="heldout" if i >= 3 else "train", node=f"host/n{i % 2}")
               for i in range(5)]
    write(tmp_path / "rollouts", results)
    path = tmp_path / "traces.duckdb"
    with TraceStore(path) as store:
        store.ingest_dir(tmp_path / "rollouts")
    return path


REFUSED = [
    "INSERT INTO rollouts SELECT * FROM rollouts",
    "UPDATE rollouts SET reward = 1",
    "DELETE FROM rollouts",
    "CREATE TABLE x AS SELECT 1",
    "DROP TABLE events",
    "ATTACH '/tmp/other.duckdb' AS o",
    "COPY rollouts TO '/tmp/out.csv'",
    "SELECT 1; DROP TABLE events",
    "PRAGMA table_info('rollouts')",
    "SET threads = 1",
    "CALL pragma_version()",
]


@pytest.mark.parametrize("query", REFUSED)
def test_anything_but_one_select_is_refused(db, query):
    with pytest.raises(SqlError) as caught:
        run_readonly_sql(db, query)
    assert caught.value.field == "query" and caught.value.value == query
    assert run_readonly_sql(db, "SELECT count(*) FROM rollouts").rows == [[5]]


def test_refusal_messages_say_why():
    with pytest.raises(SqlError, match="not DELETE"):
        check_select("DELETE FROM rollouts")
    with pytest.raises(SqlError, match="exactly one statement"):
        check_select("SELECT 1; SELECT 2")
    with pytest.raises(SqlError, match="not valid SQL"):
        check_select("SELEKT 1")


def test_select_forms_run_with_the_row_cap(db):
    capped = run_readonly_sql(db, "SELECT task_id FROM rollouts ORDER BY task_id", max_rows=2)
    assert capped.columns == ["task_id"] and capped.rows == [["t0"], ["t1"]] and capped.cut == 3
    assert "3 more cut" in capped.text()
    spread = run_readonly_sql(db, "SELECT i FROM range(5000) t(i)", max_rows=1500)
    assert len(spread.rows) == 1500 and spread.rows[-1] == [1499] and spread.cut == 3500
    described = run_readonly_sql(db, "DESCRIBE rollouts")
    assert ["rollout_id"] in [row[:1] for row in described.rows]
    with_cte = run_readonly_sql(db, "WITH x AS (SELECT 2 AS n) SELECT n * 21 FROM x")
    assert with_cte.rows == [[42]] and with_cte.cut == 0


def test_no_file_access_from_a_select(db, tmp_path):
    secret = tmp_path / "secret.txt"
    secret.write_text("hidden test")
    with pytest.raises(SqlError, match="query failed"):
        run_readonly_sql(db, f"SELECT * FROM read_text('{secret}')")


def test_long_query_is_interrupted(db):
    with pytest.raises(SqlError, match="time limit"):
        run_readonly_sql(db, "SELECT sum(hash(i)) FROM range(1000000000000) t(i)", timeout_s=0.2)


def test_query_errors_are_sql_errors(db):
    with pytest.raises(SqlError, match="query failed.*nope"):
        run_readonly_sql(db, "SELECT * FROM nope")


HIDING_ATTEMPTS = [
    "SELECT count(*) FROM rollouts WHERE split = 'heldout'",
    "SELECT count(*) FROM main.rollouts WHERE split = 'heldout'",
    "SELECT count(*) FROM query('SELECT * FROM rollouts WHERE split = ''heldout''')",
    "SELECT count(*) FROM events WHERE rollout_id LIKE '%t3%' OR rollout_id LIKE '%t4%'",
]


@pytest.mark.parametrize("query", HIDING_ATTEMPTS)
def test_heldout_rows_are_invisible_when_restricted(db, query):
    assert run_readonly_sql(db, query).rows != [[0]]  # they exist...
    assert run_readonly_sql(db, query, restrict_to_split="train").rows == [[0]]  # ...but not here


def test_restricted_view_keeps_train_rows_and_other_tables(db):
    with SqlTool(db, restrict_to_split="train") as tool:
        assert tool.run("SELECT count(*) FROM rollouts").rows == [[3]]
        assert tool.run("SELECT count(*) FROM events").rows == [[9]]
        assert tool.run("SELECT value FROM meta").rows == [[str(SCHEMA_VERSION)]]
        # Which machine ran a rollout (a Ray node) is no secret: a node's failures show as such.
        assert tool.run("SELECT node, count(*) FROM rollouts GROUP BY node ORDER BY node").rows \
            == [["host/n0", 2], ["host/n1", 1]]
    with pytest.raises(SqlError, match="unknown split"):
        SqlTool(db, restrict_to_split="test")


def test_works_on_a_store_open_for_writing_in_this_process(db):
    with TraceStore(db) as store:
        assert run_readonly_sql(store, "SELECT count(*) FROM rollouts").rows == [[5]]
        with pytest.raises(SqlError):
            run_readonly_sql(store, "DELETE FROM rollouts")
        assert store.con.execute("SELECT count(*) FROM rollouts").fetchall() == [(5,)]
