"""Ingestion: idempotent by rollout id, bad files quarantined, a killed ingest leaves no partial rollout."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap

from evoharness.agent.events import CallTimings, Event, ModelTotals
from evoharness.traces.ingest import ingest_paths
from evoharness.traces.store import TraceStore

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
    totals = ModelTotals(model_calls=2, model_s=3.5, tokens_read=120, tokens_cached=300,
                         prefill_s=2.0, decode_s=1.25, stalled_calls=1)
    original = result("t", outcome="fail", reward=0.5, tokens_in=7, tokens_out=3, steps=2,
                      duration_s=1.5, exit_reason="max_steps", verifier_tail="assert 1 == 2",
                      started_at=10.0, model="m", model_time=totals)
    write(tmp_path, [original])
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.ingest_dir(tmp_path)
        cursor = store.con.execute("SELECT * FROM rollouts")
        row = dict(zip([d[0] for d in cursor.description], cursor.fetchall()[0]))
    # Events have their own table; what an agent left (the exam's picker reads it) stays in the
    # rollout's file.
    expected = original.model_dump(exclude={"events", "model_time", "left"}) | totals.model_dump()
    assert row == expected


def test_a_model_call_s_timings_are_stored_and_other_events_have_none(tmp_path):
    timings = CallTimings(tokens_read=40, tokens_cached=360, prefill_ms=2900.0, decode_ms=6100.0,
                          stalled=True)
    events = [Event(seq=0, kind="model_call", tokens_in=400, tokens_out=30, timings=timings),
              Event(seq=1, kind="tool_call", name="shell")]
    write(tmp_path, [result("t").model_copy(update={"events": events})])
    with TraceStore(tmp_path / "t.duckdb") as store:
        store.ingest_dir(tmp_path)
        rows = store.con.execute("SELECT tokens_read, tokens_cached, prefill_ms, decode_ms, "
                                 "stalled FROM events ORDER BY seq").fetchall()
    assert rows == [(40, 360, 2900.0, 6100.0, True), (None, None, None, None, False)]


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
    import threading
    from evoharness.traces.ingest import ingest_paths, trace_files
    from evoharness.traces.store import TraceStore

    class PausingCursor:
        \"\"\"The ingest's cursor, stopped for good in batch `batch` once that batch's events are
        inserted and before its rollouts are: inside the open transaction.\"\"\"

        def __init__(self, cursor, batch):
            self.cursor, self.batch, self.batches = cursor, batch, 0

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            self.cursor.close()

        def __getattr__(self, name):
            return getattr(self.cursor, name)

        def execute(self, sql, *args):
            if sql.startswith("INSERT INTO rollouts"):
                self.batches += 1
                if self.batches == self.batch:
                    print("mid-transaction", flush=True)
                    threading.Event().wait()  # until the test kills this process
            return self.cursor.execute(sql, *args)

    class Pausing:
        def __init__(self, con, batch):
            self.con, self.batch = con, batch

        def cursor(self):
            return PausingCursor(self.con.cursor(), self.batch)

    with TraceStore(sys.argv[1]) as store:
        ingest_paths(Pausing(store.con, int(sys.argv[3])), trace_files(sys.argv[2]),
                     batch_events=20_000)
""")
ROLLOUTS, EVENTS, PER_BATCH = 150, 400, 50  # 20,000 events per batch: 50 rollouts


def test_killed_ingest_leaves_whole_rollouts_only(tmp_path):
    """SIGKILL inside a transaction (the events of a batch written, its rollouts not yet): the
    store shows exactly the batches committed before, never a part of the killed one. The kill
    point comes from the child saying where it is, not from a clock."""
    folder, db = tmp_path / "rollouts", tmp_path / "t.duckdb"
    write(folder, [result(f"t{i:03d}", events=EVENTS) for i in range(ROLLOUTS)])
    TraceStore(db).close()
    script = tmp_path / "crasher.py"
    script.write_text(CRASHER)
    # In batch 1 nothing is committed yet; the second child skips nothing, commits batches 1
    # and 2, and is killed in batch 3.
    for killed_in, committed in ((1, 0), (3, 2 * PER_BATCH)):
        child = subprocess.Popen([sys.executable, str(script), str(db), str(folder),
                                  str(killed_in)], stdout=subprocess.PIPE, text=True)
        assert child.stdout.readline() == "mid-transaction\n"
        os.kill(child.pid, signal.SIGKILL)
        child.wait()
        with TraceStore(db) as store:
            per_rollout = store.con.execute(
                "SELECT r.rollout_id, count(e.seq) FROM rollouts r "
                "LEFT JOIN events e USING (rollout_id) GROUP BY 1").fetchall()
            assert len(per_rollout) == committed
            assert all(n == EVENTS for _, n in per_rollout)
            assert counts(store) == (committed, committed * EVENTS)  # no orphan events
    with TraceStore(db) as store:
        store.ingest_dir(folder)
        assert counts(store) == (ROLLOUTS, ROLLOUTS * EVENTS)
