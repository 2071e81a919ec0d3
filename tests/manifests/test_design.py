"""The trial's settings: defaults, consistency, and how run.yaml reports a bad value."""
from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from evoharness.errors import ValidationFailed
from evoharness.evolve.config import validate_config
from evoharness.manifests.design import TrialDesign


def test_defaults_are_the_benchmarked_design():
    design = TrialDesign()
    assert (design.alpha, design.regression_alpha, design.max_rollouts) == (0.05, 0.05, 100)


@pytest.mark.parametrize("bad", [{"alpha": 0.0}, {"alpha": 0.7}, {"max_rollouts": 1},
                                 {"screen_drop_mean": 0.95}, {"screen_first_rollouts": 40},
                                 {"screen_min_history": 1},
                                 {"unknown": 1}])
def test_inconsistent_settings_are_refused(bad):
    with pytest.raises(ValidationError):
        TrialDesign(**bad)


def test_run_yaml_names_the_field_and_value():
    raw = {"run_id": "r1", "tasks": "tasks/suite", "verdicts": {"alpha": 2}}
    with pytest.raises(ValidationFailed) as error:
        validate_config(raw, Path("run.yaml"))
    problem = error.value.problems[0]
    assert (problem.field, problem.value) == ("verdicts.alpha", 2)
    config = validate_config({"run_id": "r1", "tasks": "tasks/suite",
                              "verdicts": {"max_rollouts": 60}}, Path("run.yaml"))
    assert config.verdicts.max_rollouts == 60 and config.verdicts.alpha == 0.05
