"""Tree histories: the posterior of each task's pass probability, against closed forms."""
from __future__ import annotations

import pytest
from pydantic import ValidationError

from evoharness.manifests.history import TreeHistory, beta_quantile
from evoharness.manifests.history import TaskCounts


def _history(**counts: str) -> TreeHistory:
    parsed = {t: TaskCounts(passes=int(c.split("/")[0]), total=int(c.split("/")[1]))
              for t, c in counts.items()}
    return TreeHistory(tree="abc123", counts=parsed)


def test_posterior_mean_uses_a_uniform_prior():
    history = _history(a="2/2", b="0/4", c="3/8")
    assert history.posterior_mean("a") == pytest.approx(3 / 4)
    assert history.posterior_mean("b") == pytest.approx(1 / 6)
    assert history.posterior_mean("never") == pytest.approx(1 / 2)
    assert history.passes_fails("c") == (3, 5)
    assert history.passes_fails("never") == (0, 0)


@pytest.mark.parametrize("a,b,level,expected", [
    (1, 1, 0.3, 0.3),  # uniform
    (2, 1, 0.9, 0.9 ** 0.5),  # P(X <= x) = x^2
    (3, 1, 0.5, 0.5 ** (1 / 3)),  # x^3
    (1, 2, 0.75, 1 - 0.25 ** 0.5),  # 1 - (1 - x)^2
])
def test_beta_quantile_closed_forms(a, b, level, expected):
    assert beta_quantile(a, b, level) == pytest.approx(expected, abs=1e-9)


def test_posterior_quantile_of_all_passes():
    assert _history(a="8/8").posterior_quantile("a", 0.95) == pytest.approx(0.95 ** (1 / 9))


def test_counts_cannot_exceed_their_total():
    with pytest.raises(ValidationError):
        TaskCounts(passes=3, total=2)
    with pytest.raises(ValidationError):
        TreeHistory(tree="", counts={})
