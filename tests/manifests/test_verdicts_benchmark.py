"""The known-answer benchmark (benchmarks/verdicts.py) against the figures docs/trial.md reports
(`--trials 1000`, seed 0): every strategy's keep rate averaged over cells, and its worst cell
run alone with more worlds, each at another seed than the documented run. Two tables: worlds with
validation tasks (the rule of issue 60: a change is kept only when it also helps the validation
tasks that show its failure) and worlds without them (judged on the predicted tasks alone, as a
run without validation tasks is; `--validation-share 0`).

Margins come from a stated failure probability, ALPHA = 0.1% one-sided per assertion: were the
true figure the documented one, a random seed would fail it that rarely (the seeds are fixed, so
a run is the same every time). A cell-averaged mean may pass its documented value (plus that
value's own Monte Carlo margin) by Z = 3.09 standard errors of the reduced run (normal
approximation; the binomial variance of each cell at the documented rate). A worst cell may hold
no more keeps (no fewer, for a helpful edit) than the binomial tail at the documented rate
allows (exact; a documented 0.000 is taken at its margin, 0.003). What that catches: a placebo's
mean doubled from 0.016 to 0.032 (bound 0.030); a placebo's worst cell doubled from 0.038 (bound
0.070 at its 400 worlds); fix-one-break-one's worst cell at the 0.188 a 25-world run once showed
is inside its bound (0.137 over ~110 changes allows 0.24), as much as that cell's rarity lets a
test of this size say. The first table's part (validation tasks) holds the rule of issue 60 the
same way, and checks its claim outright: a change that helps only the tasks it was shaped on is
kept at most 5% of the time in each documented worst cell (run alone with 1,400 or 330 such
changes), and a +0.3 change that helps wherever its failure shows at least 80% of the time on
average; without the validation test the shaped-only change is kept most of the time, and each
fails. About 120 CPU-seconds in all."""
from __future__ import annotations

import math

import pytest
from scipy.stats import binom

from benchmarks.verdicts import POWER, RUN_MIX, Cell, Tally, keep_rate, rollouts, run
from evoharness.manifests.design import TrialDesign

TRIALS = 25  # worlds per cell; 36 cells, so about 900 changes per strategy
ALPHA = 0.001
Z = 3.09  # the one-sided normal quantile of ALPHA

# docs/trial.md's second table (no validation tasks): strategy -> (mean over cells, its margin,
# worst cell, its keep rate).
DOCUMENTED = {
    "placebo_one_failing": (0.016, 0.001, Cell("beta", 8, 4, 8), 0.038),
    "placebo_all_failing": (0.017, 0.001, Cell("beta", 4, 1, 8), 0.037),
    "placebo_flaky": (0.025, 0.002, Cell("beta", 8, 1, 1), 0.040),
    "shield": (0.016, 0.001, Cell("beta", 4, 2, 8), 0.033),
    "copy": (0.016, 0.002, Cell("beta", 4, 4, 8), 0.065),
    "predicts_nothing": (0.000, 0.001, Cell("beta", 4, 1, 1), 0.000),
    "harmful": (0.030, 0.002, Cell("beta", 4, 1, 8), 0.103),
    "fix_one_break_one": (0.034, 0.003, Cell("beta", 4, 1, 8), 0.137),
    "good_0.3_one": (0.803, 0.004, Cell("mix", 18, 1, 8), 0.755),
    "good_0.3_two": (0.822, 0.004, Cell("beta", 18, 4, 8), 0.787),
    "good_0.5_one": (0.956, 0.002, Cell("mix", 18, 1, 8), 0.895),
    "good_0.5_two": (0.961, 0.003, Cell("mix", 18, 4, 1), 0.906),
}
ROLLOUTS = {"run mix": 39.3, "every strategy": 41.1}  # per change, mean
# Worlds per worst cell: the 4-task cells are cheap, and their gaming strategies apply in few
# worlds (fix-one-break-one in one of six), so they get more.
WORST_TRIALS = {4: 800, 8: 400, 18: 300}


OLD_FALSE_ACCEPT = [s for s in DOCUMENTED if s not in POWER]


@pytest.fixture(scope="module")
def results():
    return run(TRIALS, TrialDesign(), seed=20260101, validation_share=0)


@pytest.fixture(scope="module")
def worst_cells():
    cells = {cell for _, _, cell, _ in DOCUMENTED.values()}
    return {cell: run(WORST_TRIALS[cell.tasks], TrialDesign(), seed=20260202, cells=[cell],
                      validation_share=0)[cell]
            for cell in cells}


def cell_average_bound(results, strategy: str, rate: float) -> float:
    """Z standard errors of a mean over cells of per-cell rates, each cell's rate at `rate`."""
    counts = [named[strategy].judged for named in results.values()
              if strategy in named and named[strategy].judged]
    return Z * math.sqrt(sum(rate * (1 - rate) / n for n in counts)) / len(counts)


def assert_kept_at_most_documented(results, documented: dict, strategy: str) -> None:
    """The cell-averaged keep rate no higher than documented (plus its margin), within Z errors."""
    mean, margin, _, _ = documented[strategy]
    fig = keep_rate(results, strategy)
    null = mean + margin
    assert fig.mean <= null + cell_average_bound(results, strategy, null), (strategy, fig)


def assert_kept_at_least_documented(results, documented: dict, strategy: str) -> float:
    """The cell-averaged keep rate no lower than documented (less its margin), within Z errors;
    returns it."""
    mean, margin, _, _ = documented[strategy]
    fig = keep_rate(results, strategy, worst=min)
    null = mean - margin
    assert fig.mean >= null - cell_average_bound(results, strategy, null), (strategy, fig)
    return fig.mean


@pytest.mark.slow
@pytest.mark.parametrize("strategy", OLD_FALSE_ACCEPT)
def test_placebos_gaming_and_harm_are_kept_no_more_than_documented(results, strategy):
    assert_kept_at_most_documented(results, DOCUMENTED, strategy)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", POWER)
def test_helpful_edits_are_kept_as_often_as_documented(results, strategy):
    assert_kept_at_least_documented(results, DOCUMENTED, strategy)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", list(DOCUMENTED))
def test_each_documented_worst_cell_holds(worst_cells, strategy):
    _, _, cell, worst = DOCUMENTED[strategy]
    worst = worst or 0.003  # predicts_nothing's 0.000 +- 0.003: a rare keep is allowed
    tally: Tally = worst_cells[cell][strategy]
    assert tally.judged >= 100, (strategy, str(cell), tally)  # enough changes to say anything
    if strategy in POWER:
        assert tally.kept >= binom.ppf(ALPHA, tally.judged, worst), (strategy, str(cell), tally)
    else:
        assert tally.kept <= binom.isf(ALPHA, tally.judged, worst), (strategy, str(cell), tally)


@pytest.mark.slow
def test_rollouts_per_change(results):
    # The target (<= 40) holds over the changes a simulated run judges (the run mix); over the
    # benchmark's strategies, which over-represent changes that face the whole screen, the mean
    # is 41 (docs/trial.md: the target is missed there). Each as documented, within Z errors.
    for name, spend in (("run mix", rollouts(results, (RUN_MIX,))),
                        ("every strategy", rollouts(results, [*OLD_FALSE_ACCEPT, *POWER]))):
        assert spend.mean <= ROLLOUTS[name] + Z * spend.margin / 1.96, (name, spend)


# --- worlds with validation tasks: docs/trial.md's first table ----------------------------------

# strategy -> (mean over cells, its margin, worst cell, its keep rate)
CARRY = {
    "shaped_only_0.3": (0.025, 0.002, Cell("beta", 4, 4, 1), 0.033),
    "shaped_only_0.5": (0.026, 0.002, Cell("mix", 18, 4, 8), 0.040),
    "placebo_one_failing": (0.001, 0.001, Cell("mix", 4, 1, 8), 0.004),
    "harmful": (0.031, 0.003, Cell("beta", 4, 1, 8), 0.085),
    "fix_one_break_one": (0.034, 0.003, Cell("beta", 8, 1, 8), 0.097),
    "good_0.3_one": (0.890, 0.006, Cell("mix", 18, 1, 8), 0.827),
    "good_0.3_two": (0.895, 0.006, Cell("beta", 18, 4, 1), 0.813),
}
SHAPED = ("shaped_only_0.3", "shaped_only_0.5")
CLAIM = 0.05  # a change that helps only the tasks it was shaped on: kept at most this, every cell
CARRY_WORST_TRIALS = {4: 1500, 18: 500}


@pytest.fixture(scope="module")
def carry_results():
    return run(TRIALS, TrialDesign(), seed=20260303)


@pytest.fixture(scope="module")
def carry_worst_cells():
    return {cell: run(CARRY_WORST_TRIALS[cell.tasks], TrialDesign(), seed=20260404,
                      cells=[cell])[cell]
            for cell in {CARRY[s][2] for s in SHAPED}}


@pytest.mark.slow
@pytest.mark.parametrize("strategy", [s for s in CARRY if s not in POWER])
def test_with_validation_tasks_no_gain_there_is_rarely_kept(carry_results, strategy):
    assert_kept_at_most_documented(carry_results, CARRY, strategy)


@pytest.mark.slow
@pytest.mark.parametrize("strategy", [s for s in CARRY if s in POWER])
def test_with_validation_tasks_a_gain_wherever_the_failure_shows_is_kept(carry_results, strategy):
    mean = assert_kept_at_least_documented(carry_results, CARRY, strategy)
    assert mean >= 0.80  # the target, beyond its Monte Carlo margin here


@pytest.mark.slow
@pytest.mark.parametrize("strategy", SHAPED)
def test_a_change_shaped_on_its_own_tasks_is_kept_at_most_five_percent_in_its_worst_cell(
        carry_worst_cells, strategy):
    """The documented worst cell of each shaped-only strategy, run alone at another seed: were
    its true keep rate the claim's 5%, more keeps than this would come up 0.1% of the time."""
    tally: Tally = carry_worst_cells[CARRY[strategy][2]][strategy]
    assert tally.judged >= 300, (strategy, tally)
    assert tally.kept <= binom.isf(ALPHA, tally.judged, CLAIM), (strategy, tally)
