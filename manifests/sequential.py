"""Always-valid sequential tests on Bernoulli outcomes: the mixture e-value, its decision boundary
calibrated by exact calculation, curtailment, and the likelihood ratio against a design effect.
Which outcomes feed them (pairs, screens) and what a crossing decides is trial.py's and screen.py's.

Why these tests. A trial looks at its data after every batch and stops as soon as it can, so a
fixed-sample p-value would be checked many times and its error rate would grow with every look.
Each test here is a statement about the whole path of a Bernoulli sequence under the null "success
probability <= p0", so it holds however often and whenever the caller looks:
- The mixture e-value E(x, n; p0) = ∫ LR_p dπ(p) with π uniform on (p0, 1] and LR_p the likelihood
  ratio of p against p0 after x successes in n trials. Each LR_p is a nonnegative supermartingale
  under any success probability <= p0, so is their mixture, and Ville's inequality gives
  P(E ever >= 1/alpha) <= alpha (Wald's SPRT is the one-point mixture; the mixture needs no guess
  of the effect size). Closed form: E = B(x+1, n-x+1) * P(Bin(n+1, p0) <= x) / ((1-p0) p0^x (1-p0)^(n-x)).
- Ville's bound is loose when the number of trials is capped. `calibrated_threshold` finds, by
  dynamic programming over every path of at most `horizon` trials at p = p0, the smallest boundary
  c whose crossing probability is <= alpha. Crossing probabilities only grow with p, so the bound
  holds for the whole null p <= p0, and looking less often than after every trial only lowers it.
"""
from __future__ import annotations

import math
from functools import lru_cache

from evoharness.errors import EvoError


def _check_probability(name: str, value: float) -> None:
    if not 0.0 < value < 1.0:
        raise EvoError("must be strictly between 0 and 1", field=name, value=value)


def _check_counts(successes: int, trials: int) -> None:
    if trials < 0 or not 0 <= successes <= trials:
        raise EvoError("successes must lie in 0..trials", field="successes",
                       value=(successes, trials))


def _log_binom_pmf(k: int, n: int, p: float) -> float:
    return (math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)
            + k * math.log(p) + (n - k) * math.log1p(-p))


def binom_cdf(k: int, n: int, p: float) -> float:
    """P(Bin(n, p) <= k), summed term by term (n stays small here: a trial's rollouts)."""
    if k < 0:
        return 0.0
    if k >= n:
        return 1.0
    return min(1.0, sum(math.exp(_log_binom_pmf(j, n, p)) for j in range(k + 1)))


@lru_cache(maxsize=200_000)
def mixture_evalue(successes: int, trials: int, null_p: float) -> float:
    """E(x, n; p0): evidence against "success probability <= p0" (see the module docstring).
    E(0, 0) = 1; every success raises it, every failure lowers it."""
    _check_counts(successes, trials)
    _check_probability("null_p", null_p)
    x, n = successes, trials
    log_beta = math.lgamma(x + 1) + math.lgamma(n - x + 1) - math.lgamma(n + 2)
    tail = binom_cdf(x, n + 1, null_p)
    if tail <= 0.0:
        return math.inf
    log_null = x * math.log(null_p) + (n - x + 1) * math.log1p(-null_p)
    return math.exp(log_beta + math.log(tail) - log_null)


@lru_cache(maxsize=4096)
def crossing_probability(threshold: float, null_p: float, horizon: int,
                         success_p: float | None = None) -> float:
    """P(E(X_n, n; p0) >= threshold for some n <= horizon) when every trial succeeds with
    `success_p` (default p0, the edge of the null): exact, by carrying the probability of each
    success count among the paths not yet crossed."""
    p = null_p if success_p is None else success_p
    alive = {0: 1.0}
    crossed = 0.0
    for n in range(1, horizon + 1):
        nxt: dict[int, float] = {}
        for x, prob in alive.items():
            for step, p_step in ((1, p), (0, 1.0 - p)):
                if mixture_evalue(x + step, n, null_p) >= threshold:
                    crossed += prob * p_step
                else:
                    nxt[x + step] = nxt.get(x + step, 0.0) + prob * p_step
        alive = nxt
    return crossed


@lru_cache(maxsize=4096)
def calibrated_threshold(null_p: float, horizon: int, alpha: float) -> float:
    """The smallest boundary c (never above Ville's 1/alpha) such that a sequence of at most
    `horizon` trials with success probability <= p0 reaches E >= c with probability <= alpha.
    E takes finitely many values within the horizon, so the search runs over those."""
    _check_probability("null_p", null_p)
    _check_probability("alpha", alpha)
    if horizon < 1:
        raise EvoError("must be at least 1", field="horizon", value=horizon)
    ville = 1.0 / alpha
    values = {mixture_evalue(x, n, null_p) for n in range(1, horizon + 1) for x in range(n + 1)}
    candidates = sorted(v for v in values if 1.0 < v < ville) + [ville]
    lo, hi = 0, len(candidates) - 1  # candidates[hi] always qualifies (Ville)
    while lo < hi:
        mid = (lo + hi) // 2
        if crossing_probability(candidates[mid], null_p, horizon) <= alpha:
            hi = mid
        else:
            lo = mid + 1
    return candidates[hi]


def reachable(successes: int, trials: int, horizon: int, null_p: float, threshold: float) -> bool:
    """Whether E can still reach `threshold` within `horizon` trials: E grows with every success,
    so the best remaining path is all successes (curtailment: stop when even that falls short)."""
    remaining = max(0, horizon - trials)
    return mixture_evalue(successes + remaining, trials + remaining, null_p) >= threshold


def _log_lik(k: int, n: int, p: float) -> float:
    if p <= 0.0:
        return 0.0 if k == 0 else -math.inf
    if p >= 1.0:
        return 0.0 if k == n else -math.inf
    return k * math.log(p) + (n - k) * math.log1p(-p)


@lru_cache(maxsize=200_000)
def effect_log_ratio(base_passes: int, change_passes: int, n: int, effect: float) -> float:
    """log of max-likelihood(any p_base, p_change) / max-likelihood(p_change >= p_base + effect)
    for n rollouts of each arm: how strongly the data contradict "the change adds at least
    `effect`". Zero when the observed gain reaches the effect; grows for a placebo with every
    rollout (the futility statistic). The log-likelihood is concave, so when the observed gain
    falls short the constrained maximum lies on the line p_change = p_base + effect."""
    _check_counts(base_passes, n)
    _check_counts(change_passes, n)
    if not 0.0 < effect < 1.0:
        raise EvoError("must be strictly between 0 and 1", field="effect", value=effect)
    if n == 0 or change_passes - base_passes >= effect * n:
        return 0.0
    best = _log_lik(base_passes, n, base_passes / n) + _log_lik(change_passes, n, change_passes / n)

    def constrained(p: float) -> float:
        return _log_lik(base_passes, n, p) + _log_lik(change_passes, n, p + effect)

    # The constrained log-likelihood is concave in p on [0, 1 - effect]: golden-section search.
    lo, hi = 0.0, 1.0 - effect
    ratio = (math.sqrt(5) - 1) / 2
    for _ in range(48):
        a, b = hi - ratio * (hi - lo), lo + ratio * (hi - lo)
        if constrained(a) < constrained(b):
            lo = a
        else:
            hi = b
    fitted = max(constrained((lo + hi) / 2), constrained(0.0), constrained(1.0 - effect))
    return max(0.0, best - fitted)
