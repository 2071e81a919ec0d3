"""`evoharness traces sql` and `traces export` through the real entry point."""
from __future__ import annotations

import csv
import io
import json

import duckdb
import pytest

from evoharness.evolve.cli import main
from evoharness.evolve.ledger import RunPaths
from evoharness.traces.schema import TABLES
from evoharness.traces.store import TraceStore

from .helpers import result, write


@pytest.fixture(scope="module")
def run_dir(tmp_path_factory):
    run = tmp_path_factory.mktemp("run")
    write(run / "rollouts", [result("a"), result("b", outcome="fail"), result("c")])
    with TraceStore(RunPaths(root=run).db) as store:
        store.ingest_dir(run / "rollouts")
    return run


def cli(*args: str) -> int:
    """Run the real entry point; Typer ends with SystemExit even on success."""
    with pytest.raises(SystemExit) as exit_info:
        main(list(args))
    return exit_info.value.code


QUERY = "SELECT task_id, outcome FROM rollouts ORDER BY task_id"


def test_sql_json_and_csv(run_dir, capsys):
    assert cli("traces", "sql", str(run_dir), QUERY, "--json", "--max-rows", "2") == 0
    assert json.loads(capsys.readouterr().out) == {
        "columns": ["task_id", "outcome"], "rows": [["a", "pass"], ["b", "fail"]], "cut": 1}
    assert cli("traces", "sql", str(run_dir), QUERY, "--csv") == 0
    rows = list(csv.reader(io.StringIO(capsys.readouterr().out)))
    assert rows == [["task_id", "outcome"], ["a", "pass"], ["b", "fail"], ["c", "pass"]]


def test_sql_table_by_default(run_dir, capsys):
    assert cli("traces", "sql", str(run_dir), QUERY, "--max-rows", "1") == 0
    captured = capsys.readouterr()
    assert "task_id" in captured.out and "pass" in captured.out and "b" not in captured.out.split()
    assert "2 more row(s) not shown" in captured.err


def test_sql_refusal_is_a_clean_error(run_dir, capsys):
    assert cli("traces", "sql", str(run_dir), "DROP TABLE rollouts") == 2
    err = capsys.readouterr().err
    assert "only read-only queries" in err and "Traceback" not in err


def test_sql_on_a_missing_run_names_the_file(tmp_path, capsys):
    assert cli("traces", "sql", str(tmp_path), "SELECT 1") == 2
    assert str(tmp_path / "traces.duckdb") in capsys.readouterr().err.replace("\n", "")


def test_export_writes_parquet_per_table(run_dir, tmp_path, capsys):
    assert cli("traces", "export", str(run_dir), str(tmp_path / "out")) == 0
    files = sorted(p.name for p in (tmp_path / "out").iterdir())
    assert "rollouts.parquet" in files and "events.parquet" in files and len(files) == len(TABLES)
    con = duckdb.connect()
    parquet = str(tmp_path / "out" / "rollouts.parquet")
    assert con.execute(f"SELECT task_id FROM '{parquet}' ORDER BY 1").fetchall() == [
        ("a",), ("b",), ("c",)]
    events = str(tmp_path / "out" / "events.parquet")
    assert con.execute(f"SELECT count(*) FROM '{events}'").fetchall() == [(9,)]
