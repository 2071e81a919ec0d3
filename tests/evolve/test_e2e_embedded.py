"""End to end with the real embedded model (0.5B, code agent and evolve agent) on two easy suite
tasks, k=1, two iterations: every phase completes, the manifests (or their recorded "no change")
are valid and the evidence files exist. What the model achieves is not asserted."""
from __future__ import annotations

from pathlib import Path

import pytest

from evolve.config import RunConfig, StopRules
from evolve.ledger import EVALUATE, PHASE_ORDER
from evolve.loop import evolve
from evolve.run import init_run, open_run

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suite"
TASKS = ["create-greeting-file", "count-lines"]


@pytest.mark.slow
def test_two_iterations_on_the_embedded_model(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    # Small budgets keep this under a few minutes on 2 cores: no calibration repeat, one change,
    # a 3-step evolve session (read, change, done) and rollouts capped at 45 s.
    config = RunConfig(run_id="embedded", tasks=SUITE, task_ids=TASKS, model="embedded-small",
                       evolve_model="embedded-small", k=1, workers=2, rollout_timeout=45,
                       calibration=False, extra_rollouts=0, max_changes=1, evolve_max_steps=3,
                       stop=StopRules(iterations=2))
    run_dir = init_run(tmp_path / "run", config).root

    result = evolve(run_dir, iterations=None, resume=False, say=print)

    assert result.last_iteration == 2
    with open_run(run_dir) as run:
        for iteration in (0, 1):
            assert run.ledger.phases_done(iteration) == set(PHASE_ORDER)
            manifest = run.ledger.manifest(iteration, run.train_ids)
            assert manifest.changes or manifest.no_change_reason
            assert all(c.commit in {i.sha for i in run.repo.log()} for c in manifest.changes)
        assert run.ledger.phases_done(2) == set(EVALUATE)
        assert len(run.ledger.stored_rollout_ids()) == 3 * len(TASKS)
    for iteration in (0, 1, 2):
        evidence = run.paths.evidence(iteration)
        assert (evidence / "overview.md").is_file()
        assert {p.stem for p in (evidence / "tasks").glob("*.md")} == set(TASKS)
