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
from traces.schema import SCHEMA_VERSION, TABLES
from traces.store import StoreBusy, StoreDamaged, TraceStore

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
        tmp_path, held, wanted_read_only):
    path = tmp_path / "t.duckdb"
    TraceStore(path).close()
    proc = holder(path, held)
    with pytest.raises(StoreBusy, match="held the trace database"):
        TraceStore(path, read_only=wanted_read_only, wait_s=0.3)
    waited = {}

    def open_when_released():
        started = time.monotonic()
        with TraceStore(path, read_only=wanted_read_only, wait_s=60) as store:
            waited["rows"] = store.con.execute("SELECT count(*) FROM meta").fetchone()[0]
        waited["s"] = time.monotonic() - started

    opener = threading.Thread(target=open_when_released)
    opener.start()
    time.sleep(0.5)  # the opener is retrying now
    assert opener.is_alive()
    release(proc)
    opener.join(timeout=60)
    assert waited["rows"] == 1 and waited["s"] >= 0.5


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
