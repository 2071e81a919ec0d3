"""The store: schema creation and version check, waiting while another process holds the file the
other way, and finding a damaged file."""
from __future__ import annotations

import subprocess
import sys
import threading
import time

import duckdb
import pytest

from evoharness.errors import EvoError
from evoharness.traces.connection import StoreBusy
from evoharness.traces.schema import MIGRATIONS, SCHEMA_VERSION, TABLES
from evoharness.traces.store import StoreDamaged, TraceStore

from .helpers import damage_table_data, result, write

HOLD = """
import sys, time, duckdb
con = duckdb.connect(sys.argv[1], read_only=sys.argv[2] == "ro")
print("holding", flush=True)
sys.stdin.readline()  # until the test says so
"""


def test_creates_schema_and_reopens(tmp_path):
    path = tmp_path / "run" / "traces.duckdb"
    TraceStore(path).close()
    with TraceStore(path, read_only=True) as store:
        version = store.con.execute("SELECT value FROM meta WHERE key='schema_version'").fetchall()[0]
        assert version == (str(SCHEMA_VERSION),)
        tables = {r[0] for r in store.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
        assert tables == set(TABLES)


def test_other_schema_version_is_refused_untouched(tmp_path):
    path = tmp_path / "traces.duckdb"
    TraceStore(path).close()
    with duckdb.connect(str(path)) as con:
        con.execute("UPDATE meta SET value = '99' WHERE key = 'schema_version'")
    with pytest.raises(EvoError) as caught:
        TraceStore(path)
    assert caught.value.file == str(path)
    assert "99" in str(caught.value) and f"version {SCHEMA_VERSION}" in str(caught.value)


def _as_version(path, version):
    """A store as `version` wrote it: without the columns later versions added."""
    with duckdb.connect(str(path)) as con:
        for step in range(version, SCHEMA_VERSION):
            for statement in MIGRATIONS[step].split(";"):
                if "ADD COLUMN" in statement:
                    table, column = statement.split()[2], statement.split()[5]
                    con.execute(f"ALTER TABLE {table} DROP COLUMN {column}")
        con.execute("UPDATE meta SET value = ? WHERE key = 'schema_version'", [str(version)])


@pytest.mark.parametrize("version", [3, 4])
@pytest.mark.parametrize("read_only", [True, False])
def test_an_older_store_is_migrated_and_keeps_its_rows(tmp_path, read_only, version):
    path = tmp_path / "traces.duckdb"
    with TraceStore(path) as store:
        store.ingest_files(write(tmp_path / "r", [result("old", events=3, tokens_in=10)]))
    _as_version(path, version)
    with duckdb.connect(str(path)) as con:
        assert "stall_ms" not in {r[0] for r in con.execute("DESCRIBE events").fetchall()}
    with TraceStore(path, read_only=read_only) as store:
        old = store.con.execute("SELECT task_id, tokens_in, model_calls, model_s, "
                                "tokens_cached, stalled_calls, stall_s FROM rollouts").fetchall()
        events = store.con.execute("SELECT count(*), count(tokens_cached), bool_or(stalled), "
                                   "count(stall_ms) FROM events").fetchall()
        now = store.con.execute("SELECT value FROM meta").fetchall()
    # what the older version did not measure reads as its migration's default (NULL: unknown)
    assert old == [("old", 10, 0, 0.0, None, 0, None)] and events == [(3, 0, False, 0)]
    assert now == [(str(SCHEMA_VERSION),)]
    with TraceStore(path) as store:  # and takes new rollouts with their timings
        store.ingest_files(write(tmp_path / "s", [result("new", events=2)]))
        assert store.con.execute("SELECT count(*) FROM rollouts").fetchall() == [(2,)]


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


def holder(path, mode: str) -> subprocess.Popen:
    """Another process holding the store open (`rw` as a writer, `ro` as a reader) until released."""
    proc = subprocess.Popen([sys.executable, "-c", HOLD, str(path), mode], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    assert proc.stdout.readline().strip() == "holding"
    return proc


def release(proc: subprocess.Popen) -> None:
    proc.stdin.write("\n")
    proc.stdin.flush()
    proc.wait(timeout=30)


@pytest.mark.parametrize("held, wanted_read_only", [("rw", True), ("ro", False)])
def test_opening_waits_while_another_process_holds_the_file_the_other_way(
        tmp_path, monkeypatch, held, wanted_read_only):
    path = tmp_path / "t.duckdb"
    TraceStore(path).close()
    proc = holder(path, held)
    with pytest.raises(StoreBusy, match="held the trace database"):
        TraceStore(path, read_only=wanted_read_only, wait_s=0.3)
    # The holder is released only once the opener has been refused twice (it is retrying), so
    # the test follows the opener's progress, not a guess at how long it takes to get there.
    refused = threading.Semaphore(0)
    connect = duckdb.connect

    def observed_connect(*args, **kwargs):
        try:
            return connect(*args, **kwargs)
        except duckdb.IOException:
            refused.release()
            raise
    monkeypatch.setattr(duckdb, "connect", observed_connect)
    opened = {}

    def open_when_released():
        with TraceStore(path, read_only=wanted_read_only, wait_s=60) as store:
            opened["at"] = time.monotonic()
            opened["rows"] = store.con.execute("SELECT count(*) FROM meta").fetchone()[0]

    opener = threading.Thread(target=open_when_released)
    opener.start()
    assert refused.acquire(timeout=60) and refused.acquire(timeout=60)  # safety nets only
    assert opener.is_alive()
    released_at = time.monotonic()
    release(proc)
    opener.join(timeout=60)
    assert opened["rows"] == 1 and opened["at"] > released_at


def test_readers_share_the_file(tmp_path):
    path = tmp_path / "t.duckdb"
    TraceStore(path).close()
    proc = holder(path, "ro")
    try:
        with TraceStore(path, read_only=True, wait_s=0) as store:
            assert store.con.execute("SELECT count(*) FROM meta").fetchone() == (1,)
    finally:
        release(proc)


def test_verify_reads_every_block_and_finds_damage(tmp_path):
    path = tmp_path / "t.duckdb"
    write(tmp_path / "rollouts", [result(f"t{i}", events=400) for i in range(20)])
    with TraceStore(path) as store:
        store.ingest_dir(tmp_path / "rollouts")
        store.verify()  # a sound store passes
    damage_table_data(path)
    with TraceStore(path, read_only=True) as store:  # opening alone does not notice
        with pytest.raises(StoreDamaged, match="checksum"):
            store.verify()
