"""The sequential tests against values computed by hand, brute force and their error guarantee."""
from __future__ import annotations

import itertools
import math

import pytest
from scipy.optimize import minimize_scalar

from evoharness.errors import EvoError
from evoharness.manifests.sequential import (
    binom_cdf,
    calibrated_threshold,
    crossing_probability,
    effect_log_ratio,
    mixture_evalue,
    reachable,
)


def test_mixture_evalue_matches_hand_integrals():
    assert mixture_evalue(0, 0, 0.5) == pytest.approx(1.0)
    # sign test, uniform prior on [1/2, 1]: E(W, L) = ∫ 2 (2θ)^W (2(1-θ))^L dθ
    assert mixture_evalue(1, 1, 0.5) == pytest.approx(1.5)  # 2 ∫ 2θ dθ = 3/2
    assert mixture_evalue(1, 2, 0.5) == pytest.approx(2 / 3)  # 8 ∫ θ(1-θ) dθ = 2/3
    assert mixture_evalue(6, 6, 0.5) == pytest.approx(127 / 7)  # (2^7 - 1) / 7
    # p0 = 0.4, one success: ∫_.4^1 (p/.4) dp / .6 = (1 - .16) / (2 * .4 * .6)
    assert mixture_evalue(1, 1, 0.4) == pytest.approx(0.84 / 0.48)


def test_mixture_evalue_grows_with_successes_and_falls_with_failures():
    assert mixture_evalue(3, 3, 0.3) > mixture_evalue(2, 2, 0.3) > mixture_evalue(2, 3, 0.3)


def test_crossing_probability_by_hand_and_by_brute_force():
    # E(1, 1) = 1.5 is reached only by a first success; after a failure E(1, 2) = 2/3 < 1.5
    assert crossing_probability(1.5, 0.5, 1) == pytest.approx(0.5)
    assert crossing_probability(1.5, 0.5, 2) == pytest.approx(0.5)
    p0, horizon, threshold = 0.3, 8, 6.0
    brute = 0.0
    for path in itertools.product((0, 1), repeat=horizon):
        successes = list(itertools.accumulate(path))
        if any(mixture_evalue(x, n + 1, p0) >= threshold for n, x in enumerate(successes)):
            brute += p0 ** sum(path) * (1 - p0) ** (horizon - sum(path))
    assert crossing_probability(threshold, p0, horizon) == pytest.approx(brute)


def test_calibrated_threshold_small_cases():
    # horizon 1: the only value above 1 is E(1, 1) = 1.5, reached with probability 1/2
    assert calibrated_threshold(0.5, 1, 0.5) == pytest.approx(1.5)
    assert calibrated_threshold(0.5, 1, 0.4) == pytest.approx(2.5)  # falls back to Ville's 1/alpha


@pytest.mark.parametrize("p0,horizon,alpha", [(0.5, 50, 0.05), (0.5, 16, 0.05), (0.3, 8, 0.025),
                                              (0.2, 30, 0.025), (0.5, 20, 0.01)])
def test_calibrated_threshold_keeps_alpha_and_is_the_smallest_that_does(p0, horizon, alpha):
    threshold = calibrated_threshold(p0, horizon, alpha)
    assert threshold <= 1 / alpha
    assert crossing_probability(threshold, p0, horizon) <= alpha
    lower = [mixture_evalue(x, n, p0) for n in range(1, horizon + 1) for x in range(n + 1)]
    below = max((v for v in lower if v < threshold), default=None)
    if below is not None and below > 1:
        assert crossing_probability(below, p0, horizon) > alpha


def test_the_whole_null_crosses_at_most_as_often_as_its_edge():
    threshold = calibrated_threshold(0.5, 30, 0.05)
    edge = crossing_probability(threshold, 0.5, 30)
    assert crossing_probability(threshold, 0.5, 30, success_p=0.4) < edge <= 0.05
    assert crossing_probability(threshold, 0.5, 30, success_p=0.8) > 0.5  # and it has power


def test_reachable_is_curtailment():
    assert reachable(0, 0, 1, 0.5, 1.5)  # one success reaches E(1, 1) = 1.5
    assert not reachable(0, 1, 2, 0.5, 1.5)  # after a failure the best is E(1, 2) = 2/3
    assert not reachable(0, 0, 4, 0.5, 20.0)  # E(4, 4) = 31/5 < 20


def _log_lik(passes: int, n: int, p: float) -> float:
    return passes * math.log(p) + (n - passes) * math.log(1 - p)


def test_effect_log_ratio():
    # 0/10 on both arms: the best fit with a gain of .25 is p_base = 0, p_change = .25
    assert effect_log_ratio(0, 0, 10, 0.25) == pytest.approx(-10 * math.log(0.75))
    assert effect_log_ratio(0, 5, 10, 0.25) == 0.0  # the observed gain .5 reaches the effect
    # 3/10 against 5/10: the gain .2 falls short of .25; the constrained fit found by another
    # method (Brent's bounded search) on the line p_change = p_base + .25
    constrained = minimize_scalar(lambda p: -(_log_lik(3, 10, p) + _log_lik(5, 10, p + 0.25)),
                                  bounds=(1e-9, 0.75 - 1e-9), method="bounded",
                                  options={"xatol": 1e-12})
    unconstrained = _log_lik(3, 10, 0.3) + _log_lik(5, 10, 0.5)
    assert effect_log_ratio(3, 5, 10, 0.25) == pytest.approx(unconstrained + constrained.fun,
                                                             rel=1e-9)
    assert effect_log_ratio(3, 5, 10, 0.25) > 0.02
    assert effect_log_ratio(5, 5, 40, 0.2) > effect_log_ratio(5, 5, 10, 0.2) > 0


def test_binom_cdf():
    assert binom_cdf(0, 2, 0.5) == pytest.approx(0.25)
    assert binom_cdf(1, 3, 0.5) == pytest.approx(0.5)
    assert (binom_cdf(-1, 3, 0.5), binom_cdf(3, 3, 0.5)) == (0.0, 1.0)


@pytest.mark.parametrize("call", [
    lambda: mixture_evalue(3, 2, 0.5),
    lambda: mixture_evalue(1, 2, 0.0),
    lambda: mixture_evalue(1, 2, 1.0),
    lambda: calibrated_threshold(0.5, 0, 0.05),
    lambda: calibrated_threshold(0.5, 10, 0.0),
    lambda: effect_log_ratio(0, 0, 10, 0.0),
    lambda: effect_log_ratio(11, 0, 10, 0.2),
])
def test_invalid_inputs_name_the_field(call):
    with pytest.raises(EvoError) as error:
        call()
    assert error.value.field
