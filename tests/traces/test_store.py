"""The store: schema creation and version check, run registration and phase bookkeeping."""
from __future__ import annotations

import duckdb
import pytest

from evoharness.errors import EvoError
from traces.schema import SCHEMA_VERSION
from traces.store import TraceStore


def test_creates_schema_and_reopens(tmp_path):
    path = tmp_path / "run" / "traces.duckdb"
    with TraceStore(path) as store:
        store.register_run("r1", {"k": 3})
    with TraceStore(path, read_only=True) as store:
        version = store.con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchall()[0]
        assert version == (str(SCHEMA_VERSION),)
        assert store.con.execute("SELECT run_id, config->>'k' FROM runs").fetchall() == [("r1", "3")]


def test_other_schema_version_is_refused_untouched(tmp_path):
    path = tmp_path / "traces.duckdb"
    TraceStore(path).close()
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(EvoError) as caught:
        TraceStore(path)
    assert caught.value.file == str(path)
    assert "99" in str(caught.value) and f"version {SCHEMA_VERSION}" in str(caught.value)


def test_foreign_duckdb_and_non_duckdb_files_are_refused(tmp_path):
    foreign = tmp_path / "other.duckdb"
    with duckdb.connect(str(foreign)) as con:
        con.execute("CREATE TABLE t (x INTEGER)")
    with pytest.raises(EvoError, match="not an evoharness database"):
        TraceStore(foreign)
    with duckdb.connect(str(foreign)) as con:  # refused before any DDL ran
        assert con.execute("SELECT count(*) FROM duckdb_tables()").fetchall()[0] == (1,)
    text = tmp_path / "notes.duckdb"
    text.write_text("hello, not a database\n" * 100)
    with pytest.raises(EvoError, match="cannot open the trace database") as caught:
        TraceStore(text)
    assert caught.value.file == str(text)


def test_read_only_missing_file_is_an_error(tmp_path):
    with pytest.raises(EvoError, match="no trace database"):
        TraceStore(tmp_path / "absent.duckdb", read_only=True)
    assert not (tmp_path / "absent.duckdb").exists()


def test_register_run_keeps_the_first_config(tmp_path):
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.register_run("r", {"k": 1})
        store.register_run("r", {"k": 2})
        assert store.con.execute("SELECT config->>'k' FROM runs").fetchall() == [("1",)]


def test_phase_bookkeeping(tmp_path):
    with TraceStore(tmp_path / "t.duckdb") as store:
        assert store.last_phase("r") is None
        store.mark_phase("r", 0, "EVAL", harness_commit="abc")
        store.mark_phase("r", 0, "INGEST", detail={"ingested": 4})
        store.mark_phase("r", 0, "EVAL", harness_commit="other")  # idempotent: first record kept
        store.mark_phase("r", 1, "EVAL")
        store.mark_phase("other-run", 5, "COMMIT")
        assert store.phases_done("r", 0) == {"EVAL", "INGEST"}
        assert store.phases_done("r", 2) == set()
        assert store.last_phase("r") == (1, "EVAL")
        store.mark_phase("r", 1, "COMMIT")
        store.mark_phase("r", 1, "ATTRIBUTE")  # order comes from the phase list, not insert time
        assert store.last_phase("r") == (1, "COMMIT")
        commit = store.con.execute(
            "SELECT harness_commit FROM iterations WHERE run_id='r' AND iteration=0 AND phase='EVAL'"
        ).fetchall()[0]
        assert commit == ("abc",)


def test_unknown_phase_is_refused(tmp_path):
    with TraceStore(tmp_path / "t.duckdb") as store:
        with pytest.raises(EvoError, match="unknown phase"):
            store.mark_phase("r", 0, "EVALUATE")


def test_a_store_from_before_the_node_column_gets_it_and_keeps_its_rows(tmp_path):
    from tasks.results import Outcome, RolloutResult
    from traces.schema import DDL

    path = tmp_path / "traces.duckdb"
    with duckdb.connect(str(path)) as con:  # a store written before rollouts.node existed
        con.execute(DDL.replace("    node VARCHAR DEFAULT ''", "").replace(
            "started_at DOUBLE NOT NULL,\n", "started_at DOUBLE NOT NULL\n"))
        con.execute("INSERT INTO meta VALUES ('schema_version', ?)", [str(SCHEMA_VERSION)])
        con.execute("INSERT INTO rollouts VALUES ('old', 'r', 0, 't', 'train', 0, 'c', 'm', "
                    "'pass', 1, 0, 0, 0, 0, 'done', '', 0)")
    new = RolloutResult(rollout_id="new", run_id="r", iteration=0, task_id="t", attempt=1,
                        harness_commit="c", outcome=Outcome.FAIL, node="host/abc")
    (tmp_path / "rollouts").mkdir()
    (tmp_path / "rollouts" / "new.json").write_text(new.model_dump_json())

    with TraceStore(path) as store:
        store.ingest_dir(tmp_path / "rollouts")
        rows = store.con.execute("SELECT rollout_id, node FROM rollouts ORDER BY 1").fetchall()

    assert rows == [("new", "host/abc"), ("old", "")]
