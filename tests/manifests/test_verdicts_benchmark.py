"""The known-answer benchmark (benchmarks/verdicts.py) at reduced trials, asserting the issue's
targets. Each figure may miss its target by at most its own 95% Monte Carlo margin (1.96
standard errors at these trials); the seed is fixed, so the figures are the same every run."""
from __future__ import annotations

import pytest

from benchmarks.verdicts import FALSE_ACCEPT, POWER, RUN_MIX, keep_rate, rollouts, run
from manifests.design import TrialDesign

TRIALS = 25  # worlds per cell; 36 cells, so about 900 changes per strategy
TARGETS = {"good_0.3_one": 0.80, "good_0.3_two": 0.80, "good_0.5_one": 0.95, "good_0.5_two": 0.95}


@pytest.fixture(scope="module")
def results():
    return run(TRIALS, TrialDesign(), seed=20260101)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", FALSE_ACCEPT)
def test_placebos_gaming_and_harm_are_kept_at_most_5_percent(results, strategy):
    fig = keep_rate(results, strategy)
    assert fig.mean - fig.margin <= 0.05, (strategy, fig)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", POWER)
def test_helpful_edits_are_kept(results, strategy):
    fig = keep_rate(results, strategy, worst=min)
    assert fig.mean + fig.margin >= TARGETS[strategy], (strategy, fig)


@pytest.mark.slow
def test_rollouts_per_change(results):
    # The target (<= 40) holds over the changes a simulated run judges (the run mix). Over the
    # benchmark's strategies, which over-represent changes that pass the probe and face the
    # whole screen, the mean is about 41 (README: the target is missed there); this guards it.
    run_mix = rollouts(results, (RUN_MIX,))
    assert run_mix.mean - run_mix.margin <= 40, run_mix
    strategies = rollouts(results)
    assert strategies.mean - strategies.margin <= 42, strategies
