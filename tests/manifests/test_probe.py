"""The paired probe: its look schedule, its decisions on hand-made rollouts, and that a replay
depends on the rollouts alone."""
from __future__ import annotations

import math

import pytest

from evoharness.manifests.design import TrialDesign
from evoharness.manifests.probe import ProbeOutcomes, ProbeReplay, plan_probe, probe_target
from evoharness.manifests.sequential import calibrated_threshold, mixture_evalue

DESIGN = TrialDesign()


def _outcomes(base: dict[str, str], change: dict[str, str]) -> ProbeOutcomes:
    """'1101' -> [True, True, False, True]."""
    as_bools = lambda arm: {t: [c == "1" for c in s] for t, s in arm.items()}  # noqa: E731
    return ProbeOutcomes(base=as_bools(base), change=as_bools(change))


def test_plan_spreads_the_cap_over_the_predicted_tasks():
    one = plan_probe(["a"], DESIGN)
    assert (one.pairs_per_look, one.max_looks, one.horizon) == (2, 25, 50)
    assert one.threshold == calibrated_threshold(0.5, 50, 0.05)
    three = plan_probe(["c", "a", "b"], DESIGN)
    assert three.tasks == ["a", "b", "c"]
    assert (three.pairs_per_look, three.max_looks, three.horizon) == (1, 16, 48)  # 100 // 6 looks


def test_no_plan_without_predictions_or_when_the_cap_cannot_pair_each_once():
    assert plan_probe([], DESIGN) is None
    assert plan_probe([f"t{i}" for i in range(51)], DESIGN) is None


def test_clear_win_stops_at_the_first_look_past_the_boundary():
    plan = plan_probe(["a"], DESIGN)
    # every pair a win: E = (2^(W+1) - 1) / (W + 1) is 6.2 after 4 pairs, 18.1 after 6
    assert mixture_evalue(4, 4, 0.5) < plan.threshold < mixture_evalue(6, 6, 0.5)
    state = ProbeReplay(plan, DESIGN).state(_outcomes({"a": "0" * 10}, {"a": "1" * 10}))
    assert (state.result, state.looks, state.wins, state.losses) == ("effective", 3, 6, 0)
    assert state.rollouts == 12  # the four extra rollouts past the deciding look are ignored


def test_clear_placebo_stops_for_futility():
    plan = plan_probe(["a"], DESIGN)
    state = ProbeReplay(plan, DESIGN).state(_outcomes({"a": "0" * 20}, {"a": "0" * 20}))
    # 0/m on both arms: the best fit with a gain of .2 has log ratio -m log .8; it passes
    # log 3 after 5 pairs, but futility waits for 6 pairs (the third look)
    assert (state.result, state.looks) == ("futile", 3)
    assert state.futility == pytest.approx(-6 * math.log(0.8))


def test_open_until_the_next_look_is_complete():
    plan = plan_probe(["a", "b"], DESIGN)
    replay = ProbeReplay(plan, DESIGN)
    state = replay.state(_outcomes({"a": "0", "b": "0"}, {"a": "1"}))
    assert (state.result, state.looks) == ("open", 0)
    assert probe_target(plan, state) == 1


def test_a_cap_too_small_to_reach_the_boundary_stops_at_once():
    design = TrialDesign(max_rollouts=8)  # 4 pairs: E(4, 4) = 6.2 < Ville's 20
    plan = plan_probe(["a"], design)
    state = ProbeReplay(plan, design).state(_outcomes({"a": "00"}, {"a": "11"}))
    assert (state.result, state.looks) == ("capped", 1)


def test_replay_depends_on_the_rollouts_only():
    plan = plan_probe(["a"], DESIGN)
    data = _outcomes({"a": "0101001000100"}, {"a": "1101101110111"})
    fresh = ProbeReplay(plan, DESIGN).state(data)
    stepwise = ProbeReplay(plan, DESIGN)
    for n in range(0, 14, 3):  # a run killed and resumed at several points
        stepwise.state(_outcomes({"a": "0101001000100"[:n]}, {"a": "1101101110111"[:n]}))
    assert stepwise.state(data) == fresh
    # the same replay given different rollouts starts again instead of reusing its looks
    other = _outcomes({"a": "1111111111"}, {"a": "0000000000"})
    assert stepwise.state(other) == ProbeReplay(plan, DESIGN).state(other)
