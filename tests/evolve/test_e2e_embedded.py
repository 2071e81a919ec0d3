"""End to end with the real embedded model (0.5B, code agent and evolve agent) on one easy suite
task, k=1, one iteration: every phase completes (a change's trial included), the manifest (or its
recorded "no change") is valid and the evidence files exist. What the model achieves is not
asserted."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evoharness.evolve.agent import session
from evoharness.evolve.config import ExamConfig, RunConfig, StopRules
from evoharness.evolve.ledger import PHASE_ORDER, Phase
from evoharness.evolve.loop import evolve
from evoharness.evolve.run import init_run, open_run
from evoharness.manifests.design import TrialDesign

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suite"
TASKS = ["count-lines"]
# The work is bounded by steps and tokens, never by a clock: one evaluation rollout of at most 2
# steps x 128 tokens (the harness the trial leaves is the one evaluated, so the iteration limit
# does not evaluate it again), one evolve session of 2 steps x 384 tokens (room for a change with
# its manifest) and at most two trial rollouts (ONE_PAIR); each step may take one free retry
# after an unusable reply (agent/loop.py), so at most 3,072 generated tokens. With two tasks, at a load average of 5 on 2 cores, this took 350 s (a rollout
# about 100 s); with one task at a load average of 5-6 it took 554 s, of which the evolve session
# (three calls, a retry included, 930 tokens generated) took 446 s. No clock bounds the work, so
# the clocks below are only guards against a hang, set far past any load: pytest's at an hour
# (2,560 tokens at under one token a second), a rollout's at half an hour (a rollout that reached
# it would be recorded as a timeout, not fail the test).
CODE_AGENT = {"max_steps": 2, "max_output_tokens": 128}
EVOLVE_AGENT = {"max_output_tokens": 384}
# A change's trial at its smallest: one pair of probe rollouts (one on the base, one with the
# change), which cannot show a gain at alpha 0.05, so the change is reverted without a screen.
ONE_PAIR = TrialDesign(max_rollouts=2, batch_rollouts=2)


def _bound_the_code_agent(run_dir: Path) -> str:
    """The run's harness with CODE_AGENT's settings, committed before the first evaluation."""
    with open_run(run_dir) as run:
        path = run.paths.workspace / "harness.yaml"
        spec = yaml.safe_load(path.read_text())
        spec["settings"].update(CODE_AGENT)
        path.write_text(yaml.safe_dump(spec, sort_keys=False))
        return run.repo.commit_change("settings: the test's step and token budget",
                                      change_id="test-budget", component="settings")


@pytest.mark.slow
@pytest.mark.timeout(3600)
def test_an_iteration_on_the_embedded_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    monkeypatch.setattr(session, "DEFAULT_SETTINGS",
                        session.DEFAULT_SETTINGS.model_copy(update=EVOLVE_AGENT))
    # rollout_timeout is a safety net only: no rollout should reach it (an abandoned one would
    # still finish its model call, which the process then waits for at exit).
    config = RunConfig(run_id="embedded", tasks=SUITE, task_ids=TASKS, model="embedded-small",
                       evolve_model="embedded-small", k=1, workers=2, rollout_timeout=1800,
                       calibration=False, max_changes=1, evolve_max_steps=2, verdicts=ONE_PAIR,
                       exam=ExamConfig(on_stop=False), stop=StopRules(iterations=1))
    run_dir = init_run(tmp_path / "run", config).root
    budget_commit = _bound_the_code_agent(run_dir)

    result = evolve(run_dir, iterations=None, resume=False, say=print)

    assert result.last_iteration == 1
    with open_run(run_dir) as run:
        assert run.ledger.phases_done(0) == set(PHASE_ORDER)
        manifest = run.ledger.manifest(0, run.train_ids)
        history = run.repo.log()
        assert all(c.commit in {i.sha for i in history} for c in manifest.changes)
        # ONE_PAIR cannot show a gain: every change is judged and reverted by a git revert
        # commit, and the workspace ends where it started (the test's budget commit).
        reverted = {i.trailers.get("Reverts-Change-Id") for i in history}
        assert {c.id for c in manifest.changes} <= set(run.ledger.reverts()) & reverted
        assert run.repo.tree_id() == run.repo.tree_id(budget_commit)
        # ...which iteration 0 evaluated: at the limit it is not evaluated again
        assert run.ledger.phases_done(1) == set()
        assert result.stop_reason.endswith("the harness left is iteration 0's, not evaluated again")
        evolved = run.ledger.phase(0, Phase.EVOLVE).result
        with run.ledger.reading() as store:
            rollouts, trial_rollouts, most_steps = store.con.execute(
                "SELECT count(*) FILTER (rollout_id NOT LIKE '%-trial-%'), "
                "count(*) FILTER (rollout_id LIKE '%-trial-%'), max(steps) FROM rollouts"
            ).fetchone()
    assert rollouts == len(TASKS)
    assert trial_rollouts == (2 if manifest.changes else 0)
    assert most_steps <= CODE_AGENT["max_steps"] and evolved.steps <= config.evolve_max_steps
    evidence = run.paths.evidence(0)
    assert (evidence / "overview.md").is_file()
    assert {p.stem for p in (evidence / "tasks").glob("*.md")} == set(TASKS)
