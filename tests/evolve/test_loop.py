"""evolve/loop.py and phases.py: resuming at the edges of a phase (a crash after a phase's work but
before it was marked done), on the e2e fixture suite with scripted agents on a loopback server."""
from __future__ import annotations

from pathlib import Path

import pytest

from evolve import phases
from evolve.config import RunConfig, StopRules, load_config, save_config
from evolve.loop import EVALUATE, PHASE_ORDER, evolve
from evolve.run import init_run, open_run
from manifests.store import load_manifest, manifest_path
from tests.fixtures.e2e_agents import HELPFUL_RULE, ScriptedAgents, change, done

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]


@pytest.fixture
def agents(monkeypatch: pytest.MonkeyPatch):
    scripted = ScriptedAgents(solves=lambda system: HELPFUL_RULE in system,
                              evolve_script=[change(HELPFUL_RULE, TRAIN), done()])
    with scripted.server() as server:
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        yield scripted


def evaluated_run(tmp_path: Path) -> Path:
    """A run whose baseline is evaluated (stopped cleanly after DISTILL of iteration 0)."""
    config = RunConfig(run_id="loop", tasks=SUITE, model="ollama:scripted", k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=0))
    run_dir = init_run(tmp_path / "run", config).root
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    return run_dir


def test_evolve_that_registered_its_manifest_is_not_run_again(tmp_path: Path, agents) -> None:
    run_dir = evaluated_run(tmp_path)
    with open_run(run_dir) as run:  # EVOLVE's work done, then a crash before it was marked
        phases.evolve_harness(run, 0)
        head = run.repo.head()
    calls = agents.total("evolve")

    evolve(run_dir, iterations=1, resume=True, say=lambda _: None)

    assert agents.total("evolve") == calls
    with open_run(run_dir) as run:
        assert run.store.phases_done(run.run_id, 0) == set(PHASE_ORDER)
        assert run.store.phases_done(run.run_id, 1) == set(EVALUATE)
        [entry] = load_manifest(manifest_path(run_dir, 0), run.train_ids).changes
        assert entry.commit == head
        decision = run.store.con.execute("SELECT decision FROM verdicts").fetchone()
    assert decision == ("keep",)


def test_a_clean_stop_continues_without_resume(tmp_path: Path, agents) -> None:
    run_dir = evaluated_run(tmp_path)

    result = evolve(run_dir, iterations=1, resume=False, say=lambda _: None)

    assert result.last_iteration == 1
    with open_run(run_dir) as run:
        assert run.store.phases_done(run.run_id, 1) == set(EVALUATE)


def test_the_wall_time_budget_counts_earlier_processes(tmp_path: Path, agents) -> None:
    run_dir = evaluated_run(tmp_path)
    paths, config = load_config(run_dir)
    spent = 0.01  # less than any real evaluation takes, more than a resumed no-op
    stop = StopRules(iterations=3, wall_seconds=spent)
    save_config(paths, config.model_copy(update={"stop": stop}))

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert (result.last_iteration, result.stop_reason) == (0, "wall-time budget of 0s spent")
    assert agents.total("evolve") == 0
