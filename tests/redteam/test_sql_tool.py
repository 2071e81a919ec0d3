"""Red team, the evolve agent's SQL tool (restricted to the train split) on a store that holds
held-out rows, hidden test lines in verifier output, quarantine paths naming held-out rollouts and
a run config listing held-out ids: nothing the evidence hides comes back, by any query; and no
query can take the host's memory."""
from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from evoharness.tasks.results import rollout_id
from tests.traces.helpers import result, write
from evoharness.traces.sql_child import MEMORY_BYTES
from evoharness.traces.sql_tool import RESTRICTED_VIEW, SqlError, SqlTool, run_readonly_sql
from evoharness.traces.store import TraceStore

pytestmark = pytest.mark.timeout(300)  # a safety net only: every query here ends in seconds

HELDOUT = "secret-exam"
HIDDEN_LINE = 'assert parse_config("weird.ini") == {"mode": "strict"}'
# What pytest prints for a failing hidden test: the source it echoes ("    " and ">" lines) must
# never show; its "E" line may, but the hidden test's own text is redacted out of it.
VERIFIER_TAIL = textwrap.dedent(f"""\
    ============================= FAILURES =============================
    ___________________________ test_config ____________________________
        def test_config():
    >       {HIDDEN_LINE}
    E       {HIDDEN_LINE}
    E       AssertionError: wrong mode
    FAILED ../tests/test_state.py::test_config - AssertionError: wrong mode
    """)
HELD_ROLLOUT = rollout_id(0, HELDOUT, 0)


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("redteam-sql")
    rows = [result("fix-config", outcome="fail", verifier_tail=VERIFIER_TAIL,
                   exit_reason=f"sandbox_error: {HIDDEN_LINE}"),
            result(HELDOUT, split="heldout", outcome="fail", verifier_tail=VERIFIER_TAIL)]
    write(tmp / "rollouts", rows)
    with TraceStore(tmp / "traces.duckdb") as store:
        con = store.con  # the run's own records, as the ledger indexes them
        con.execute("INSERT INTO runs VALUES ('run', 0, ?)",
                    ['{"task_ids": ["fix-config", "%s"], "heldout": ["%s"]}' % (HELDOUT, HELDOUT)])
        store.ingest_dir(tmp / "rollouts")
        con.execute("INSERT INTO iterations VALUES ('run', 0, 'INGEST', NULL, 0, ?)",
                    ['{"quarantined": [{"path": "iterations/it000/rollouts/%s.json", '
                     '"reason": "bad"}]}' % HELD_ROLLOUT])
        con.execute("INSERT INTO verdicts VALUES ('c1', 'run', 1, 'rule', 'ineffective', "
                    "'revert', ?)", [f'{{"note": "{HELDOUT} flipped", "rollout": "{HELD_ROLLOUT}"}}'])
        con.execute("INSERT INTO reverts VALUES ('c1', 'run', 1, 'abc', 'def', ?, NULL, false)",
                    [f"{HELDOUT} regressed in {HELD_ROLLOUT}"])
        yield store


@pytest.fixture
def tool(store):
    with SqlTool(store, restrict_to_split="train", forbidden=[HIDDEN_LINE]) as sql:
        yield sql


SECRETS = (HELDOUT, HELD_ROLLOUT, HIDDEN_LINE, "def test_config", "weird.ini")


def _everything(tool: SqlTool) -> str:
    """Every value of every table the session has, as text."""
    tables = [row[0] for row in tool.run("SELECT table_name FROM information_schema.tables").rows]
    return "\n".join(str(tool.run(f"SELECT * FROM {name}", max_rows=10_000).rows)
                     for name in tables)


def test_the_restricted_view_holds_nothing_the_evidence_hides(store, tool):
    unrestricted = SqlTool(store)  # what is there, to prove the attack would find something
    raw = "\n".join(str(unrestricted.run(f"SELECT * FROM {t}").rows) for t in RESTRICTED_VIEW)
    assert all(secret in raw for secret in (HELDOUT, HELD_ROLLOUT, HIDDEN_LINE))
    seen = _everything(tool)
    assert [secret for secret in SECRETS if secret in seen] == []
    assert "AssertionError: wrong mode" in seen  # the failing lines the evidence shows do come


@pytest.mark.parametrize("query", [
    "SELECT config FROM runs",
    "SELECT detail FROM iterations",
    "SELECT verifier_tail FROM rollouts",
    "SELECT * FROM main.rollouts WHERE split = 'heldout' AND verifier_tail <> ''",
])
def test_dropped_columns_do_not_exist(tool, query):
    with pytest.raises(SqlError, match="query failed") as refused:
        tool.run(query)
    assert refused.value.field == "query" and refused.value.value == query


@pytest.mark.parametrize("query", [
    "SELECT count(*) FROM rollouts WHERE split = 'heldout'",
    "SELECT count(*) FROM events WHERE rollout_id LIKE '%exam%'",
    "SELECT count(*) FROM duckdb_columns() WHERE column_name IN ('config', 'verifier_tail') "
    "OR (table_name = 'iterations' AND column_name = 'detail')",
    "SELECT count(*) FROM rollouts WHERE verifier_lines LIKE '%parse_config%'",
    "SELECT count(*) FROM rollouts WHERE exit_reason LIKE '%weird.ini%'",
    "SELECT count(*) FROM verdicts WHERE detail LIKE '%exam%'",
])
def test_filters_and_catalog_queries_find_nothing(tool, query):
    assert tool.run(query).rows == [[0]]


LIMITS = ("SELECT current_setting('memory_limit'), current_setting('threads'), "
          "current_setting('temp_directory')")


def _assert_bounded(limits: list) -> None:
    memory, threads, temp = limits[0]
    assert memory.endswith("MiB") and float(memory.split()[0]) <= 512
    assert threads <= 2 and temp == ""  # no spilling to disk either


def test_every_session_is_bounded_and_cannot_unbound_itself(store, tool, tmp_path):
    _assert_bounded(tool.run(LIMITS).rows)
    with SqlTool(store) as snapshot:  # a store this process holds open
        _assert_bounded(snapshot.run(LIMITS).rows)
    TraceStore(tmp_path / "other.duckdb").close()
    _assert_bounded(run_readonly_sql(tmp_path / "other.duckdb", LIMITS).rows)  # `traces sql`
    with pytest.raises(SqlError, match="only read-only"):
        tool.run("SET memory_limit = '100GB'")
    # Behind the statement check, the configuration itself is locked.
    assert tool.run("SELECT current_setting('lock_configuration')").rows == [[True]]


def test_a_memory_bomb_fails_instead_of_growing_the_process(tmp_path):
    """DuckDB's memory_limit does not bound this string_agg: in the calling process it grew to
    3.5 GB under the 512 MB limit. The query runs in a child under an address-space limit, so the
    calling process stays small and the child fails within the limit instead. The calling
    process's peak is its own VmHWM (ru_maxrss would carry over pytest's peak through exec);
    400 MB leaves over twice its size before the query."""
    db = tmp_path / "traces.duckdb"
    TraceStore(db).close()
    script = textwrap.dedent(f"""
        import resource
        from evoharness.traces.sql_tool import SqlError, run_readonly_sql
        try:
            run_readonly_sql({str(db)!r}, "SELECT length(string_agg(repeat('x', 1000), '')) "
                             "FROM range(20000000)", timeout_s=120)
            print("finished")
        except SqlError as error:
            print("refused:", " ".join(error.message.split())[:200])
        status = open("/proc/self/status").read()
        print(int(status.split("VmHWM:")[1].split()[0]) // 1024)
        print(resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss // 1024)
    """)
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=280, check=True)
    verdict, own_mb, query_mb = done.stdout.strip().splitlines()[-3:]
    assert verdict.startswith("refused:") and "Out of Memory" in verdict, verdict
    assert int(own_mb) < 400
    assert 0 < int(query_mb) <= MEMORY_BYTES >> 20
