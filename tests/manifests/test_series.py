"""A pre-registered series of trials (manifests/series.py): levels fixed first and summing to at
most the family's alpha, each trial recorded at its own level, none past the family."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from evoharness.errors import EvoError
from evoharness.manifests.series import SeriesPlan, SeriesRecord, register


def test_equal_and_halving_spending_sum_to_the_family_alpha():
    assert register("s", 4, 0.05, at=0).levels == [0.0125] * 4
    assert register("s", 3, 0.05, "halving", at=0).levels == [0.025, 0.0125, 0.0125]
    assert register("s", 1, 0.05, "halving", at=0).levels == [0.05]


def test_levels_that_spend_more_than_alpha_are_refused():
    with pytest.raises(ValidationError, match="above alpha"):
        SeriesPlan(name="s", size=2, alpha=0.05, levels=[0.05, 0.05], registered_at=0)
    with pytest.raises(ValidationError, match="2 levels for a family of 3"):
        SeriesPlan(name="s", size=3, alpha=0.05, levels=[0.01, 0.01], registered_at=0)


def test_each_trial_takes_the_next_level_and_none_runs_past_the_family():
    record = SeriesRecord(plan=register("s", 2, 0.05, "halving", at=0))
    assert record.add("r1", {"e": ("keep", 0.01)}).level == 0.025
    assert record.add("r2", {"e": ("revert", 0.4)}).index == 1
    with pytest.raises(EvoError, match="the series is spent"):
        record.add("r3", {})


def test_the_family_wise_error_of_a_spent_series_is_at_most_alpha():
    """Union bound, by simulation: ten trials of a remedy with no effect, each p uniform, each
    rejected at its level. The family rejects anywhere in at most alpha of 20,000 families
    (plus 3.09 standard errors: a 0.1% chance to fail were the rate alpha)."""
    import random

    plan = register("s", 10, 0.05, "halving", at=0)
    rng = random.Random(3)
    families = 20_000
    false = sum(any(rng.random() <= level for level in plan.levels) for _ in range(families))
    assert false / families <= 0.05 + 3.09 * (0.05 * 0.95 / families) ** 0.5
