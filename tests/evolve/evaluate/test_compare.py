"""evolve/evaluate/compare.py: the paired comparison's numbers by hand, its floor at the rollouts' noise,
the verdict words, and its false-"better" rate on simulated equal harnesses."""
from __future__ import annotations

import math
import random

import pytest

from evoharness.errors import EvoError
from evoharness.evolve.evaluate.compare import (InfraErrors, bonferroni, compare, pair_interval,
                            pair_interval_of_counts)
from evoharness.manifests.history import TaskCounts

T_3_975 = 3.182446305284263  # Student's t, 3 degrees of freedom, 97.5th percentile


def counts(*pairs: tuple[int, int]) -> dict[str, TaskCounts]:
    return {f"t{i}": TaskCounts(passes=p, total=n) for i, (p, n) in enumerate(pairs)}


def test_mean_and_interval_by_hand_when_the_tasks_spread_more_than_the_rollouts():
    a = counts((1, 4), (2, 4), (1, 4), (2, 4))
    b = counts((3, 4), (2, 4), (3, 4), (1, 4))
    result = compare("A", a, "B", b, confidence=0.95)
    diffs = [0.5, 0, 0.5, -0.25]
    mean = sum(diffs) / 4
    sd = math.sqrt(sum((d - mean) ** 2 for d in diffs) / 3)
    assert result.mean == pytest.approx(0.1875)
    assert result.se == pytest.approx(sd / 2)  # above the rollout floor here
    assert result.lo == pytest.approx(mean - T_3_975 * sd / 2)
    assert result.hi == pytest.approx(mean + T_3_975 * sd / 2)
    assert result.verdict == "no difference shown"
    assert result.sentence() == (f"no difference shown: +18.8 points [{100 * result.lo:+.1f}, "
                                 f"{100 * result.hi:+.1f}] (95% interval, 4 tasks)")


def test_identical_moves_still_get_the_rollouts_noise_not_a_zero_width_interval():
    a = counts(*[(0, 4)] * 4)
    b = counts(*[(4, 4)] * 4)  # every task from 0/4 to 4/4: the spread over tasks is 0
    result = compare("A", a, "B", b, confidence=0.95)
    adjusted = 2 * (1 / 6) * (5 / 6) / 6  # Agresti-Caffo per task, both sides
    floor = math.sqrt(4 * adjusted) / 4
    assert result.se == pytest.approx(floor)
    assert result.lo == pytest.approx(1 - T_3_975 * floor) and result.hi == 1.0
    assert result.verdict == "better" and 0 < result.lo < 1
    assert result.sentence().startswith("better by +100.0 points [")


def test_a_drop_is_worse_and_one_task_is_too_few():
    result = compare("A", counts(*[(4, 4)] * 5), "B", counts(*[(0, 4)] * 5), confidence=0.95)
    assert result.verdict == "worse" and result.hi < 0
    alone = compare("A", counts((0, 4)), "B", counts((4, 4)), confidence=0.95)
    assert alone.verdict == "too few tasks" and alone.lo is None
    assert alone.sentence() == "too few tasks to say (1 paired)"


def test_more_infra_errors_are_worse_whatever_the_pass_rates():
    """B passes every rollout it scored, but left a third of its rollouts infra errors (its
    failures, hidden): a regression, not a gain; the same rate as A's is no such thing."""
    a, b = counts(*[(2, 4)] * 5), counts(*[(4, 4)] * 5)
    rose = compare("A", a, "B", b, confidence=0.95, a_infra=InfraErrors(errors=0, rollouts=20),
                   b_infra=InfraErrors(errors=10, rollouts=30))
    assert rose.verdict == "worse" and rose.infra_rose and rose.lo > 0
    assert rose.sentence().startswith("worse: more infra errors (10/30 against 0/20), a "
                                      "regression whatever the pass rates (pass rates: +50.0")
    same = compare("A", a, "B", b, confidence=0.95, a_infra=InfraErrors(errors=1, rollouts=20),
                   b_infra=InfraErrors(errors=1, rollouts=20))
    assert same.verdict == "better" and not same.infra_rose
    alone = compare("A", counts((0, 4)), "B", counts((4, 4)), confidence=0.95,
                    b_infra=InfraErrors(errors=1, rollouts=5))
    assert alone.verdict == "worse" and "too few tasks to say" in alone.sentence()


def test_tasks_one_side_did_not_score_are_named_not_paired():
    a = {"x": TaskCounts(passes=1, total=2), "y": TaskCounts(passes=1, total=2)}
    b = {"x": TaskCounts(passes=2, total=2), "z": TaskCounts(passes=2, total=2)}
    result = compare("A", a, "B", b, confidence=0.9)
    assert [p.task_id for p in result.tasks] == ["x"] and result.unpaired == ["y", "z"]


def test_bonferroni_splits_the_error_rate():
    assert bonferroni(0.95, 2) == pytest.approx(0.975)
    assert bonferroni(0.95, 1) == bonferroni(0.95, 0) == pytest.approx(0.95)
    wide = compare("A", counts(*[(1, 4)] * 5), "B", counts(*[(3, 4)] * 5), confidence=0.975)
    narrow = compare("A", counts(*[(1, 4)] * 5), "B", counts(*[(3, 4)] * 5), confidence=0.95)
    assert wide.hi - wide.lo > narrow.hi - narrow.lo


def test_equal_harnesses_are_rarely_called_better():
    """400 simulated pairs of equal harnesses (7 tasks, k = 4, pass probabilities 0.05-0.95): a
    95% two-sided interval calls B better at most 2.5% of the time in expectation; allowed: 2.5%
    plus three binomial standard errors (2.3 points). benchmarks/exam.py measured 1.1% over 2000."""
    rng = random.Random(7)
    better = 0
    for _ in range(400):
        p = [rng.uniform(0.05, 0.95) for _ in range(7)]
        a = {f"t{i}": TaskCounts(passes=sum(rng.random() < q for _ in range(4)), total=4)
             for i, q in enumerate(p)}
        b = {f"t{i}": TaskCounts(passes=sum(rng.random() < q for _ in range(4)), total=4)
             for i, q in enumerate(p)}
        better += compare("A", a, "B", b, confidence=0.95).verdict == "better"
    assert better / 400 <= 0.025 + 3 * math.sqrt(0.025 * 0.975 / 400)


def pairs(both: int, wins: int, losses: int, neither: int) -> list[tuple[bool, bool]]:
    """(A passed, B passed) pairs with these counts."""
    return ([(True, True)] * both + [(False, True)] * wins + [(True, False)] * losses
            + [(False, False)] * neither)


@pytest.mark.parametrize("counts, lo, hi", [
    ((36, 12, 2, 0), 0.0569, 0.3404),  # Newcombe (1998), the three examples of method 10
    ((18, 12, 2, 18), 0.0562, 0.3290),  # a positive association: the corrected phi
    ((53, 0, 0, 1), -0.0729, 0.0729),
])
def test_pair_interval_reproduces_newcombes_published_intervals(counts, lo, hi):
    both, wins, losses, neither = counts
    paired = pair_interval(pairs(*counts), confidence=0.95)
    assert paired.mean == pytest.approx((wins - losses) / sum(counts))
    assert (paired.lo, paired.hi) == (pytest.approx(lo, abs=1e-4), pytest.approx(hi, abs=1e-4))
    assert (paired.pairs, paired.wins, paired.losses) == (sum(counts), wins, losses)


def test_pair_interval_narrows_with_pairs_and_widens_with_confidence():
    small = pair_interval(pairs(25, 9, 0, 30), confidence=0.95)
    strict = pair_interval(pairs(25, 9, 0, 30), confidence=0.99)
    large = pair_interval(pairs(50, 18, 0, 60), confidence=0.95)
    assert strict.lo < small.lo < small.mean < small.hi < strict.hi
    assert small.lo < large.lo and large.hi < small.hi
    unmoved = pair_interval([(True, True)] * 3, confidence=0.95)  # no pair moved
    assert unmoved.mean == 0 and unmoved.lo == -unmoved.hi and 0 < unmoved.hi < 1
    with pytest.raises(EvoError, match="no pairs"):
        pair_interval([], confidence=0.95)


def test_pair_interval_of_counts_is_the_interval_of_those_pairs_and_refuses_negative_counts():
    for counts in [(36, 12, 2, 0), (18, 12, 2, 18), (0, 6, 0, 0)]:
        assert (pair_interval_of_counts(*counts, confidence=0.99)
                == pair_interval(pairs(*counts), confidence=0.99))
    with pytest.raises(EvoError, match="must not be negative") as refused:
        pair_interval_of_counts(3, 2, 0, -1, confidence=0.95)
    assert refused.value.field == "neither"
    assert refused.value.value == dict(both=3, wins=2, losses=0, neither=-1)


def test_sign_test_counts_only_the_discordant_pairs():
    assert pair_interval(pairs(25, 9, 0, 30), confidence=0.95).sign_test_p() == 0.5 ** 9
    assert pair_interval(pairs(5, 1, 1, 5), confidence=0.95).sign_test_p() == 0.75
    assert pair_interval(pairs(5, 0, 0, 5), confidence=0.95).sign_test_p() == 1.0


def test_pair_interval_covers_the_true_gain_over_tasks_that_differ():
    """1000 simulated trials like the rescue's (16 tasks, 4 pairs each, base pass rates 0-1, the
    change rescuing a failed base rollout at 0-60% a task and losing a passed one at 0-5%): the
    95% interval should hold the true mean gain over the tasks 95% of the time, more because the
    tasks differ (96.5% with this seed); allowed: 95% less three binomial standard errors (2.1
    points)."""
    rng = random.Random(11)
    covered = 0
    for _ in range(1000):
        tasks = [(rng.random(), rng.uniform(0, 0.6), rng.uniform(0, 0.05)) for _ in range(16)]
        truth = sum((1 - p) * rescue - p * loss for p, rescue, loss in tasks) / 16
        sample = []
        for p, rescue, loss in tasks:
            for _ in range(4):
                base = rng.random() < p
                sample.append((base, rng.random() >= loss if base else rng.random() < rescue))
        paired = pair_interval(sample, confidence=0.95)
        covered += paired.lo <= truth <= paired.hi
    assert covered / 1000 >= 0.95 - 3 * math.sqrt(0.95 * 0.05 / 1000)
