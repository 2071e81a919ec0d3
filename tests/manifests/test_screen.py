"""The regression screen: who is screened, the two tests, the base top-up, and the floors."""
from __future__ import annotations

import pytest

from evoharness.manifests.design import TrialDesign
from evoharness.manifests.history import TreeHistory
from evoharness.manifests.history import TaskCounts
from evoharness.manifests.screen import ScreenTask, plan_screen, screen_state
from evoharness.manifests.sequential import calibrated_threshold, mixture_evalue

DESIGN = TrialDesign()  # margin .7, candidates plausibly >= .9, top-up to 8, dropped below .75
T, F = True, False
THIN = ScreenTask("b", passes=2, fails=0)  # two passes under the base tree


def test_candidates_are_tasks_that_are_plausibly_stable_passing():
    # candidate when P(p >= .9) >= .15 under Beta(passes + 1, fails + 1), which is
    # P(Bin(passes + fails + 1, .9) <= passes)
    history = TreeHistory(tree="t", counts={
        "a": TaskCounts(passes=8, total=8),  # 1 - .9^9 = .61
        "b": TaskCounts(passes=2, total=2),  # 1 - .9^3 = .27
        "c": TaskCounts(passes=5, total=8),  # .008
        "d": TaskCounts(passes=9, total=10),  # 1 - .9^11 - 11 * .9^10 * .1 = .30: one unlucky failure
        "e": TaskCounts(passes=0, total=2),
        "f": TaskCounts(passes=1, total=1),  # 1 - .9^2 = .19
        "g": TaskCounts(passes=3, total=4),  # .08
    })
    assert [t.task_id for t in plan_screen(history, set(), DESIGN)] == ["a", "b", "d", "f"]
    assert [t.task_id for t in plan_screen(history, {"a"}, DESIGN)] == ["b", "d", "f"]  # a predicted fix


def test_a_stable_task_clears_the_first_test_without_base_rollouts():
    # floor 1 - .7 = .3 holds whatever the base rate; E(4, 4; .3) = 35.2 clears the boundary
    state = screen_state(THIN, [], [T, T, T, T], DESIGN)
    assert (state.result, state.floor, state.rollouts, state.base_rollouts) == ("held", 0.3, 4, 0)
    assert state.threshold == calibrated_threshold(0.3, 8, 0.025)  # half of regression_alpha
    assert mixture_evalue(2, 2, 0.3) < state.threshold <= state.evalue == pytest.approx(35.19, abs=0.01)


def test_the_next_look_is_requested_until_the_first_test_decides():
    state = screen_state(THIN, [], [F, F], DESIGN)
    assert (state.result, state.waiting_on, state.target) == ("open", "change", 4)


def test_failing_the_first_test_tops_up_the_base_history():
    state = screen_state(THIN, [], [F, F, F, F], DESIGN)  # 0/4 can no longer reach the boundary
    assert (state.result, state.waiting_on, state.target) == ("open", "base", 2)


def test_a_top_up_that_shows_a_flaky_task_drops_it():
    # 2/2 history then 0/2: even six more passes would give a mean of 7/10 < .75
    state = screen_state(THIN, [F, F], [F, F, F, F], DESIGN)
    assert (state.result, state.base_rollouts, state.mean) == ("dropped", 2, 0.5)


def test_second_test_uses_the_floor_of_the_topped_up_history():
    base = [T] * 6  # 8/8 under the base: q .95 of Beta(9, 1) = .95^(1/9) = .9943, floor .30
    state = screen_state(THIN, base, [F, F, F, F], DESIGN)
    assert (state.result, state.floor, state.waiting_on, state.target) == ("open", 0.3, "change", 6)
    broken = screen_state(THIN, base, [F] * 30, DESIGN)
    assert broken.result == "regressed"
    recovered = screen_state(THIN, base, [F, F, F, F] + [T] * 26, DESIGN)
    assert recovered.result == "held"
    assert recovered.threshold == calibrated_threshold(0.3, 30, 0.025)
    assert recovered.evalue >= recovered.threshold


def test_screen_state_depends_on_the_rollouts_only():
    change = [F, T, F, F, T, T, T, T, T, T, T, T]  # 5/8 fails the first test, 9/12 clears the second
    whole = screen_state(THIN, [T] * 6, change, DESIGN)
    assert (whole.result, whole.rollouts, whole.base_rollouts) == ("held", 12, 6)
    assert screen_state(THIN, [T] * 6 + [F] * 4, change + [F] * 10, DESIGN) == whole
