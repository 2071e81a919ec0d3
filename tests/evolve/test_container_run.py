"""A Harbor suite whose tasks bring their own Dockerfile runs unchanged, as a user runs it, from
`init --tasks DIR` to the final exam: `auto` puts every rollout in the task's image (the oracle's
command exists only there), the exam's arms pass the held-out task in it, and the exam line is
what `evoharness exam` shows again. Through a real engine (podman, as install.sh installs it)."""
from __future__ import annotations

import json

from evoharness.evolve.ledger import RunPaths
from tests.faults.conftest import edit_config, evoharness, rollouts
from tests.fixtures.containers import TOOL, container_home, needs_engine, tool_task
from tests.fixtures.e2e_agents import write_script

pytestmark = needs_engine
__all__ = ["container_home"]  # the fixture, used by name
SOLVE = {"tool": "shell", "arguments": {"command": f"{TOOL} hello > /app/out.txt"}}


def test_a_suite_with_its_own_images_runs_from_init_to_the_exam(tmp_path, container_home,
                                                                 monkeypatch):
    suite = tmp_path / "suite"
    tool_task(suite / "tool-train")
    tool_task(suite / "tool-heldout")
    (suite / "suite.toml").write_text('[split]\ntrain = ["tool-train"]\n'
                                      'heldout = ["tool-heldout"]\n')
    monkeypatch.setenv("EVOHARNESS_CONTAINERS", str(container_home))
    model = write_script(tmp_path / "agent.yaml",
                         [{"when": {"instruction_has": [TOOL]}, "replies": [SOLVE]}])
    run_dir = tmp_path / "run"
    made = evoharness("init", run_dir, "--tasks", suite, "--model", model, "-k", "1",
                      "--exam-k", "1", "--iterations", "0")
    assert made.returncode == 0, made.stderr
    edit_config(run_dir, calibration=False)

    ran = evoharness("evolve", run_dir, timeout=900)
    assert ran.returncode == 0, ran.stderr
    stored = rollouts(run_dir)
    # the baseline's train and held-out rollouts; the exam keeps its own in RUN/exams/
    assert [(rollout, outcome) for rollout, outcome, _ in stored] == [
        ("it000-tool-heldout-a00", "pass"), ("it000-tool-train-a00", "pass")]
    [record] = RunPaths(root=run_dir).exam_records.glob("*.json")
    exam = json.loads(record.read_text())
    assert exam["tasks"] == ["tool-heldout"]
    assert exam["note"] == "the final harness is the seed (no change was kept)"
    # the seed and the seed again both passed the held-out task in its image
    [pair] = exam["noise_floor"]["tasks"]
    assert (pair["a"], pair["b"]) == ({"passes": 1, "total": 1}, {"passes": 1, "total": 1})
    assert "exam on 1 held-out task" in ran.stdout
    shown = evoharness("exam", run_dir)  # shown again, from the record
    assert shown.returncode == 0, shown.stderr
    [row] = [line for line in shown.stdout.splitlines() if "tool-heldout" in line]
    assert row.count("1/1") == 2, row
    assert "the final harness is the seed (no change was kept)" in shown.stdout
