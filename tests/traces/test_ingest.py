"""Ingestion: idempotent by rollout id, bad files quarantined, a killed ingest leaves no partial rollout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time

from agent.events import Event
from traces.ingest import ingest_paths
from traces.store import TraceStore

from .helpers import result, write


def counts(store):
    return store.con.execute("SELECT (SELECT count(*) FROM rollouts), (SELECT count(*) FROM events)").fetchall()[0]


def test_ingest_twice_changes_nothing(tmp_path):
    results = [result(f"t{i}", events=i + 1) for i in range(4)]
    write(tmp_path / "rollouts", results)
    with TraceStore(tmp_path / "t.duckdb") as store:
        first = store.ingest_dir(tmp_path / "rollouts")
        assert (first.ingested, first.skipped_existing, first.events) == (4, 0, 10)
        assert counts(store) == (4, 10)
        second = store.ingest_dir(tmp_path / "rollouts")
        assert (second.ingested, second.skipped_existing, second.events) == (0, 4, 0)
        assert counts(store) == (4, 10)
        assert store.stored_rollout_ids("run") == {r.rollout_id for r in results}
        stored = store.con.execute(
            "SELECT seq, kind, name, content, data, tokens_in, tokens_out, duration_ms, ts "
            "FROM events WHERE rollout_id = ? ORDER BY seq", [results[2].rollout_id]).fetchall()
        fields = ("seq", "kind", "name", "content", "data", "tokens_in", "tokens_out",
                  "duration_ms", "ts")
        assert [Event(**{**dict(zip(fields, row)), "data": json.loads(row[4])})
                for row in stored] == list(results[2].events)


def test_new_files_are_added_to_stored_ones_across_small_batches(tmp_path):
    folder = tmp_path / "rollouts"
    paths = write(folder, [result(f"t{i}") for i in range(5)])
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.ingest_files(paths[:2])
        report = ingest_paths(store.con, paths + paths[:1], batch_events=4)
        assert (report.ingested, report.skipped_existing) == (3, 3)
        assert counts(store) == (5, 15)


def test_stored_row_matches_the_file(tmp_path):
    original = result("t", outcome="fail", reward=0.5, tokens_in=7, tokens_out=3, steps=2,
                      duration_s=1.5, exit_reason="max_steps", verifier_tail="assert 1 == 2",
                      started_at=10.0, model="m")
    write(tmp_path, [original])
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.ingest_dir(tmp_path)
        row = store.con.execute("SELECT * FROM rollouts").fetchall()[0]
    expected = original.model_dump(exclude={"events"})
    assert dict(zip(expected, row)) == expected


def test_bad_files_are_quarantined_and_the_rest_ingested(tmp_path):
    folder = tmp_path / "rollouts"
    good = write(folder, [result("a"), result("b")])
    (folder / "half.json").write_text(good[0].read_text()[:100])
    (folder / "empty.json").write_text("")
    bad_outcome = json.loads(good[1].read_text()) | {"outcome": "great", "rollout_id": "x"}
    (folder / "schema.json").write_text(json.dumps(bad_outcome))
    repeated = json.loads(good[1].read_text()) | {"rollout_id": "y"}
    repeated["events"][1]["seq"] = 0
    (folder / "dupseq.json").write_text(json.dumps(repeated))
    huge = json.loads(good[1].read_text()) | {"rollout_id": "z", "iteration": 2**40}
    (folder / "huge.json").write_text(json.dumps(huge))
    (folder / ".tmp-in-progress.json.tmp").write_text("{")  # an atomic write underway: ignored
    with TraceStore(tmp_path / "t.duckdb") as store:
        report = store.ingest_dir(folder)
        assert report.ingested == 2 and counts(store) == (2, 6)
    reasons = {item.path.rsplit("/", 1)[1]: item.reason for item in report.quarantined}
    assert sorted(reasons) == ["dupseq.json", "empty.json", "half.json", "huge.json", "schema.json"]
    assert "outcome" in reasons["schema.json"] and "seq" in reasons["dupseq.json"]
    assert sorted(p.name for p in (folder / "quarantine").iterdir()) == sorted(reasons)
    assert sorted(p.name for p in folder.glob("*.json")) == sorted(p.name for p in good)


def test_quarantine_never_overwrites(tmp_path):
    folder = tmp_path / "rollouts"
    with TraceStore(tmp_path / "t.duckdb") as store:
        for text in ("{", "[", "nope"):
            (folder / "bad.json").parent.mkdir(exist_ok=True)
            (folder / "bad.json").write_text(text)
            store.ingest_dir(folder)
    kept = sorted((folder / "quarantine").iterdir())
    assert sorted(p.read_text() for p in kept) == ["[", "nope", "{"]


CRASHER = textwrap.dedent("""
    import sys
    from traces.ingest import ingest_paths, trace_files
    from traces.store import TraceStore
    with TraceStore(sys.argv[1]) as store:
        print("ingesting", flush=True)
        ingest_paths(store.con, trace_files(sys.argv[2]), batch_events=20_000)
        print("done", flush=True)
""")


def test_killed_ingest_leaves_whole_rollouts_only(tmp_path):
    folder, db = tmp_path / "rollouts", tmp_path / "t.duckdb"
    results = [result(f"t{i:03d}", events=400) for i in range(150)]
    write(folder, results)
    TraceStore(db).close()
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    # Kill at growing delays: some land mid-transaction, later ones after some batches committed.
    for delay in (0.05, 0.3, 0.6, 1.0):
        child = subprocess.Popen([sys.executable, str(script), str(db), str(folder)],
                                 stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "ingesting\n"
        time.sleep(delay)
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        with TraceStore(db) as store:
            per_rollout = store.con.execute(
                "SELECT r.rollout_id, count(e.seq) FROM rollouts r "
                "LEFT JOIN events e USING (rollout_id) GROUP BY 1").fetchall()
            assert all(n == 400 for _, n in per_rollout)
            orphans = store.con.execute(
                "SELECT count(*) FROM events WHERE rollout_id NOT IN (SELECT rollout_id FROM rollouts)"
            ).fetchall()[0]
            assert orphans == (0,)
    with TraceStore(db) as store:
        store.ingest_dir(folder)
        assert counts(store) == (150, 60_000)
