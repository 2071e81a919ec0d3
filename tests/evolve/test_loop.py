"""evolve/loop.py and phases.py: resuming at the edges of a phase (a crash after a phase's work but
before it was recorded), budgets counted over processes, on the e2e fixture suite with the
scripted model playing both agents."""
from __future__ import annotations

import json
from pathlib import Path

import duckdb

from evolve import phases
from evolve.config import RunConfig, StopRules, load_config, save_config
from evolve.ledger import EVALUATE, PHASE_ORDER, Phase
from evolve.loop import evolve
from evolve.run import init_run, open_run
from tests.fixtures.e2e_agents import HELPFUL_RULE, agents, change, done

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]


def evaluated_run(tmp_path: Path) -> Path:
    """A run whose baseline is evaluated (stopped cleanly after DISTILL of iteration 0)."""
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, TRAIN), done()],
                   solves_with=[HELPFUL_RULE])
    config = RunConfig(run_id="loop", tasks=SUITE, model=model, k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=0))
    run_dir = init_run(tmp_path / "run", config).root
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    return run_dir


def evolve_sessions(run_dir: Path) -> int:
    return len(list((run_dir / "iterations").glob("it*/evolve_trace.json")))


def test_evolve_that_registered_its_manifest_is_not_run_again(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)
    with open_run(run_dir) as run:  # EVOLVE's work done, then a crash before it was recorded
        phases.evolve_harness(run, 0)
        head = run.repo.head()
    trace = (run_dir / "iterations/it000/evolve_trace.json").read_text()

    evolve(run_dir, iterations=1, resume=True, say=lambda _: None)

    assert (run_dir / "iterations/it000/evolve_trace.json").read_text() == trace  # not rerun
    with open_run(run_dir) as run:
        assert run.ledger.phases_done(0) == set(PHASE_ORDER)
        assert run.ledger.phases_done(1) == set(EVALUATE)
        assert run.ledger.phase(0, Phase.EVOLVE).result.resumed
        [entry] = run.ledger.manifest(0, run.train_ids).changes
        assert entry.commit == head
        [record] = run.ledger.changes()
    assert record.decision == "keep"


def test_a_clean_stop_continues_without_resume(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)

    result = evolve(run_dir, iterations=1, resume=False, say=lambda _: None)

    assert result.last_iteration == 1
    with open_run(run_dir) as run:
        assert run.ledger.phases_done(1) == set(EVALUATE)


def test_the_wall_time_budget_counts_earlier_processes(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)
    paths, config = load_config(run_dir)
    spent = 0.01  # less than any real evaluation takes, more than a resumed no-op
    stop = StopRules(iterations=3, wall_seconds=spent)
    save_config(paths, config.model_copy(update={"stop": stop}))

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert (result.last_iteration, result.stop_reason) == (0, "wall-time budget of 0s spent")
    assert evolve_sessions(run_dir) == 0


def test_a_phase_recorded_on_disk_but_not_in_the_store_is_indexed_at_the_next_open(
        tmp_path: Path) -> None:
    """The record file is the truth: a crash between writing it and indexing it loses nothing."""
    run_dir = evaluated_run(tmp_path)
    with duckdb.connect(str(run_dir / "traces.duckdb")) as con:  # the row never made it
        con.execute("DELETE FROM iterations WHERE phase = 'DISTILL'")
    with open_run(run_dir) as run, run.ledger.reading() as store:
        detail = store.con.execute(
            "SELECT detail FROM iterations WHERE phase = 'DISTILL'").fetchone()[0]
    assert json.loads(detail)["overview"].endswith("overview.md")
