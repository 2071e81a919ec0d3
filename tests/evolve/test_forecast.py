"""The forecast: what the stop rules allow, at the pace of the run's own evaluations or of this
machine's last measurement with the model, saying which."""
from __future__ import annotations

import os
import socket

from evoharness.agent.clients.speed import MachineSpeed, load_speed, save_speed
from evoharness.evolve.config import RunConfig
from evoharness.evolve.forecast import forecast_lines, pace, plan, remember
from evoharness.evolve.run import read_run
from evoharness.evolve.status import status
from tests.fixtures.recorded_run import build_recorded_run

DEMO = RunConfig(run_id="demo", tasks="tasks/suite", k=2, stop={"iterations": 2},
                 exam={"k": 2}, verdicts={"max_rollouts": 24})


def test_the_readme_s_main_job_allows_42_to_932_rollouts() -> None:
    """4 train and 3 held-out tasks at k=2. With no change made: two evaluations of 14 (the limit
    does not evaluate the seed a third time) and the baseline's second, and an exam of the seed
    twice (3 x 2 x 2) that the calibrated baseline's held-out rollouts (3 x 4) already hold. At
    the caps: three evaluations, an exam of 3 x 2 x 4 less those 12, and each of 2 iterations adds
    3 changes x (24 probe + 30 screen x 4 train tasks)."""
    demo = plan(DEMO, train=4, heldout=3)
    assert (demo.least, demo.most) == (2 * 14 + 14 + 0, 3 * 14 + 14 + 12 + 2 * 3 * (24 + 120))
    text = forecast_lines(DEMO, 4, 3, None)
    assert text[0].startswith("forecast: 42-932 rollouts: 2-3 evaluations x 14")
    assert text[0].endswith("an exam of 0-12")
    uncalibrated = plan(DEMO.model_copy(update={"calibration": False}), train=4, heldout=3)
    assert uncalibrated.exam_of_seed == 6  # the baseline's 3 x 2 cover one seed arm of two
    assert "no pace measured yet" in text[1]


def test_a_run_s_own_evaluations_set_its_pace(tmp_path) -> None:
    run_dir = build_recorded_run(tmp_path / "run")
    config, ledger = read_run(run_dir)
    own = pace(ledger, config)
    assert own.seconds_per_rollout == 3 / 32  # 3 evaluations of 1 s, 16 + 8 + 8 rollouts
    assert own.source == "this run's evaluations (iterations 0-2, 2 workers)"
    lines = status(run_dir)["forecast"]
    assert own.source in lines[1] and "s and" in lines[1]


def test_a_machine_s_measurement_is_the_pace_until_the_run_has_its_own(tmp_path,
                                                                          monkeypatch) -> None:
    monkeypatch.setenv("EVOHARNESS_SPEED_CACHE", str(tmp_path / "speed"))
    config = DEMO.model_copy(update={"model": "ollama:coder"})
    assert pace(None, config) is None
    save_speed(MachineSpeed(host=socket.gethostname(), model="coder", workers=2,
                            seconds_per_rollout=36.0, tokens_per_rollout=1500.0,
                            evolve_seconds=360.0, evolve_tokens=40_000.0, source="run night1",
                            measured_at=0.0))
    text = forecast_lines(config, 4, 3, pace(None, config))
    # 42 rollouts x 36 s + 2 sessions x 6 min = 0.6 h; 932 x 36 s + 12 min = 9.5 h
    assert text[1].startswith("  0.6-9.5 h, 0.14-1.48 M tokens at 36 s and 1,500 tokens")
    assert "this machine's last measurement with coder: run night1" in text[1]


def test_a_run_leaves_its_pace_as_the_machine_s_measurement(tmp_path, monkeypatch) -> None:
    monkeypatch.setenv("EVOHARNESS_SPEED_CACHE", str(tmp_path / "speed"))
    config, ledger = read_run(build_recorded_run(tmp_path / "run"))
    remember(ledger, config)  # the recording's model is an Ollama one
    kept = load_speed("scripted")
    assert kept.seconds_per_rollout == 3 / 32
    assert kept.source == "run recorded's evaluations (iterations 0-2, 2 workers)"
    assert kept.decode_tokens_per_s > 0  # its rollouts' tokens over their decode seconds
    os.remove(next((tmp_path / "speed").iterdir()))
    remember(ledger, config.model_copy(update={"model": "scripted:done"}))
    assert load_speed("scripted") is None  # a test double's pace is kept for nothing


def test_an_exam_baseline_of_known_n_is_counted_and_one_of_the_evolution_s_is_named() -> None:
    given = DEMO.model_copy(update={"exam": DEMO.exam.model_copy(
        update={"baseline": "best-of:5"})})
    assert plan(given, 4, 3).exam == 24 - 12 + 3 * 2 * 5  # 3 tasks x 2 picks x 5 attempts
    unsized = DEMO.model_copy(update={"exam": DEMO.exam.model_copy(update={"baseline": "best-of"})})
    assert "its best-of baseline" in forecast_lines(unsized, 4, 3, None)[0]


def test_validation_tasks_are_evaluated_and_lengthen_each_trial():
    from evoharness.evolve.config import RunConfig
    from evoharness.evolve.forecast import plan

    config = RunConfig(run_id="r", tasks="tasks/suite", k=2)
    without, with_ = plan(config, 8, 4), plan(config, 8, 4, validation=4)
    assert with_.evaluation == without.evaluation + 4 * 2
    assert (without.probe_cap, with_.probe_cap) == (100, 300)  # two tests of 150 each, at most
