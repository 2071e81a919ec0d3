"""The run ledger over a recorded run (tests/fixtures/recorded_run.py): the store is an index of
the run's files, so `rebuild` gives the same tables; a writer's open finds a damaged or missing
store and rebuilds it, keeping the damaged file; readers read, only the lock holder writes."""
from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from evoharness.errors import EvoError
from evoharness.evolve.cli import main
from evoharness.evolve.ledger import PHASE_ORDER, Phase, RunLedger, RunPaths
from evoharness.manifests.record import PENDING
from tests.fixtures.recorded_run import CHANGES, build_recorded_run
from tests.traces.helpers import damage_table_data, tables



@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return build_recorded_run(tmp_path / "run")


def writer(run_dir: Path, said: list[str] | None = None) -> RunLedger:
    return RunLedger.open(RunPaths(root=run_dir), command="test",
                          say=(said.append if said is not None else lambda _: None))


def test_rebuild_gives_the_same_tables_phase_state_included(run_dir: Path) -> None:
    db = RunPaths(root=run_dir).db
    before = tables(db)
    # iteration 2 stopped after COMMIT: no TRIAL or REVERT
    assert len(before["iterations"]) == 3 * len(PHASE_ORDER) - 2 and before["reverts"]
    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "rebuild", str(run_dir)])
    assert exit_info.value.code == 0
    assert tables(db) == before
    kept = list(run_dir.glob("traces.duckdb.replaced-*"))
    assert len(kept) == 1 and tables(kept[0]) == before  # the old store is kept, not deleted


def test_a_damaged_store_is_rebuilt_when_the_run_is_opened_to_change_it(run_dir: Path) -> None:
    db = RunPaths(root=run_dir).db
    before = tables(db)
    damage_table_data(db)  # a plain open does not notice
    said: list[str] = []
    writer(run_dir, said).close()
    assert "checksum" in said[0] and "rebuilt it from the run's files" in said[0]
    assert tables(db) == before
    assert list(run_dir.glob("traces.duckdb.damaged-*"))  # kept aside for a post-mortem


def test_a_missing_store_is_rebuilt(run_dir: Path) -> None:
    db = RunPaths(root=run_dir).db
    before = tables(db)
    db.unlink()
    said: list[str] = []
    writer(run_dir, said).close()
    assert "missing" in said[0] and tables(db) == before


def test_records_read_back_as_the_loop_wrote_them(run_dir: Path) -> None:
    ledger = RunLedger.open(RunPaths(root=run_dir))
    assert ledger.position() == (2, set(Phase) - {Phase.TRIAL, Phase.REVERT})
    assert ledger.phases_done(1) == set(Phase)
    assert [r.id for r in ledger.changes()] == list(CHANGES)
    decisions = {r.id: r.decision for r in ledger.changes()}
    assert decisions == {"c0-prompt": "keep", "c0-memory": "revert", "c1-placebo": "revert",
                         "c1-tool": "revert", "c2-memory": PENDING}
    assert ledger.scoreboard().iterations.keys() == {0, 1}
    assert ledger.trial_setup("c0-prompt").applied == "alone"
    assert ledger.trial_setup("c2-memory") is None


def test_a_reader_cannot_change_the_run(run_dir: Path) -> None:
    ledger = RunLedger.open(RunPaths(root=run_dir))
    with pytest.raises(EvoError, match="opened to read"):
        ledger.record_judgements([])
    with pytest.raises(EvoError, match="opened to read"):
        ledger.rebuild()


def test_a_hand_broken_record_is_an_error_naming_it(run_dir: Path) -> None:
    path = RunPaths(root=run_dir).judgement("c0-prompt")
    path.write_text(path.read_text().replace('"keep"', '"maybe"'))
    with pytest.raises(EvoError, match="c0-prompt.json") as caught:
        RunLedger.open(RunPaths(root=run_dir)).changes()
    assert caught.value.field == "verdict.decision"


def test_a_changed_store_file_is_not_trusted_over_the_records(run_dir: Path) -> None:
    """The files are the truth: a verdict row changed behind the ledger's back is indexed again."""
    db = RunPaths(root=run_dir).db
    before = tables(db)
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE verdicts SET decision = 'keep'")
        con.execute("DELETE FROM reverts")
    writer(run_dir).close()
    assert tables(db) == before
