"""Verdicts from hand-built outcomes: every kind, the noise rule, the band, net-negative, borderline."""
from __future__ import annotations

from manifests.attribution import TaskClass, attribute, borderline_tasks
from manifests.noise import NoiseModel, TaskCounts

from .builders import change, counts, noise


def one(ch, before, after, nm=None):
    [verdict] = attribute([ch], counts(before), counts(after), nm or noise())
    return verdict


def test_effective_when_every_predicted_fix_is_confirmed():
    v = one(change("A", fixes={"a": 0.8}), "a=0/2 b=2/2", "a=2/2 b=2/2")
    assert (v.verdict, v.decision, v.confirmed_fixes) == ("effective", "keep", ["a"])


def test_partial_when_some_predicted_fixes_are_missed():
    v = one(change("A", fixes={"a": 0.8, "b": 0.5}), "a=0/2 b=0/2", "a=2/2 b=0/2")
    assert (v.verdict, v.decision, v.missed_fixes) == ("partial", "keep", ["b"])


def test_ineffective_reverts_as_not_shown():
    v = one(change("A", fixes={"a": 0.8}), "a=0/2", "a=0/2")
    assert (v.verdict, v.decision) == ("ineffective", "revert")
    assert "not shown" in v.reason


def test_harmful_when_predicted_regression_happens_without_fix():
    v = one(change("A", fixes={"a": 0.5}, regs={"c": 0.2}), "a=0/2 c=2/2", "a=0/2 c=0/2")
    assert (v.verdict, v.decision, v.predicted_regressions_observed) == ("harmful", "revert", ["c"])


def test_mixed_kept_when_fixes_outweigh_regressions():
    ch = change("A", fixes={"a": 0.6, "b": 0.6}, regs={"c": 0.3})
    v = one(ch, "a=0/2 b=0/2 c=2/2", "a=2/2 b=1/2 c=0/2")
    assert (v.verdict, v.decision) == ("mixed", "keep")


def test_tie_with_unpredicted_regression_reverts():
    v = one(change("A", fixes={"a": 0.6}), "a=0/2 z=2/2", "a=2/2 z=0/2")
    assert (v.verdict, v.decision, v.unpredicted_regressions) == ("mixed", "revert", ["z"])
    assert "noise band" in v.reason


def test_unstable_task_cannot_confirm_a_fix():
    v = one(change("A", fixes={"a": 0.9}), "a=0/2", "a=2/2", noise("a", flips="a"))
    assert (v.verdict, v.decision, v.unjudged_predictions) == ("ineffective", "revert", ["a"])
    assert v.per_task[0].cls is TaskClass.UNSTABLE


def test_mixed_evaluation_makes_a_task_unstable():
    nm = NoiseModel(comparisons={"a": 1}, flips={"a": 0}, mixed={"a": 1})
    v = one(change("A", fixes={"a": 0.9}), "a=0/2", "a=2/2", nm)
    assert v.decision == "revert"


def test_unstable_task_cannot_prove_a_regression():
    v = one(change("A", fixes={"a": 0.9}), "a=0/2 c=2/2", "a=2/2 c=0/2", noise("a c", flips="c"))
    assert (v.verdict, v.decision, v.unpredicted_regressions) == ("effective", "keep", [])


def test_outweigh_rule_respects_the_noise_band():
    ch = change("A", fixes={"a": 0.6, "b": 0.6, "c": 0.6}, regs={"d": 0.3})
    before, after = "a=0/2 b=0/2 c=0/2 d=2/2 x=1/2 y=1/2", "a=2/2 b=2/2 c=2/2 d=0/2 x=1/2 y=1/2"
    # x and y flipped once in two comparisons each: band 1.0, margin 2 -> keep
    wide = NoiseModel(comparisons={"x": 2, "y": 2, "a": 2}, flips={"x": 1, "y": 1})
    assert one(ch, before, after, wide).decision == "keep"
    # flip rate 1.0 each: band 2.0, margin 2 is inside it -> revert
    wider = NoiseModel(comparisons={"x": 1, "y": 1}, flips={"x": 1, "y": 1})
    assert one(ch, before, after, wider).decision == "revert"


def test_net_negative_iteration_keeps_only_clean_changes():
    clean = change("A", fixes={"a": 0.7})
    outweighs = change("B", fixes={"e": 0.5, "f": 0.5, "g": 0.5}, regs={"c": 0.2})
    breaker = change("C", regs={"h": 0.1, "i": 0.1, "j": 0.1, "k": 0.1})
    before = counts("a=0/2 e=0/2 f=0/2 g=0/2 c=2/2 h=2/2 i=2/2 j=2/2 k=2/2")
    after = counts("a=2/2 e=2/2 f=2/2 g=2/2 c=0/2 h=0/2 i=0/2 j=0/2 k=0/2")
    verdicts = {v.change_id: v for v in attribute([clean, outweighs, breaker], before, after, noise())}
    assert verdicts["A"].decision == "keep"
    assert (verdicts["B"].verdict, verdicts["B"].decision) == ("mixed", "revert")
    assert "net negative" in verdicts["B"].reason
    assert (verdicts["C"].verdict, verdicts["C"].decision) == ("harmful", "revert")
    # Without the breaking change's regressions the iteration is net positive and B stays.
    calm = {**after, **counts("h=2/2 i=2/2 j=2/2 k=2/2")}
    kept = attribute([clean, outweighs], before, calm, noise())
    assert [v.decision for v in kept] == ["keep", "keep"]


def test_change_predicting_nothing_is_never_kept():
    v = one(change("A"), "a=0/2", "a=2/2")
    assert (v.verdict, v.decision) == ("ineffective", "revert")


def test_fixed_task_predicted_by_two_changes_credits_both():
    verdicts = attribute([change("A", fixes={"a": 0.5}), change("B", fixes={"a": 0.4})],
                         counts("a=0/2"), counts("a=2/2"), noise())
    assert [v.confirmed_fixes for v in verdicts] == [["a"], ["a"]]


def test_borderline_detection_and_reattribution_with_extra_rollouts():
    ch = change("A", fixes={"a": 0.6}, regs={"b": 0.2})
    before, after = counts("a=0/2 b=2/2 c=0/2"), counts("a=1/2 b=1/2 c=1/2")
    assert borderline_tasks([ch], before, after, noise()) == ["a", "b"]  # c is not predicted
    assert attribute([ch], before, after, noise())[0].per_task[0].borderline
    extra = {"a": TaskCounts(passes=0, total=2), "b": TaskCounts(passes=2, total=2)}
    merged = {**after, **{t: after[t].plus(extra[t]) for t in extra}}
    assert borderline_tasks([ch], before, merged, noise()) == []
    v = attribute([ch], before, merged, noise())[0]
    assert (v.verdict, v.decision) == ("ineffective", "revert")


def test_unjudged_when_task_is_missing_after():
    v = one(change("A", fixes={"a": 0.6}), "a=0/2", "b=2/2")
    assert v.unjudged_predictions == ["a"] and v.decision == "revert"
