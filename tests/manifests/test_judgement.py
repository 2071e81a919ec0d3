"""Judgements: a change's trial setup with the verdict its real trial reached, stored and read
back whole; what a reader shows (fixes, regressions, the record's verdict) derives from them."""
from __future__ import annotations

from evoharness.manifests.judgement import Judgement
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.revert import RevertRecord

from .builders import change, judge

HISTORY = "a=0/2 b=0/2 s=2/2"
FIXES_A = change("A", fixes={"a": 0.8}, regs={"s": 0.2})


def test_an_effective_change_keeps_its_trial_and_every_task_it_used():
    j = judge(FIXES_A, HISTORY, base={"a": "0"}, change={"a": "1"}, iteration=3, run_id="r")
    assert (j.change_id, j.run_id, j.iteration, j.decision, j.outcome) == (
        "A", "r", 3, "keep", "effective")
    by_task = {t.task_id: t for t in j.verdict.tasks}
    assert (by_task["a"].role, by_task["a"].result, by_task["a"].history) == ("probe", "fixed", "0/2")
    # s is stable passing: screened, and it held, so the predicted regression did not happen
    assert (by_task["s"].role, by_task["s"].predicted, by_task["s"].result) == (
        "screen", "regression", "held")
    assert "b" not in by_task  # neither predicted nor stable: the trial never ran it
    assert j.confirmed_fixes == ["a"] and j.regressions == []
    assert j.verdict.rollouts.used == j.verdict.rollouts.recorded > 0
    assert Judgement.model_validate_json(j.model_dump_json()) == j  # stored and read back whole


def test_a_change_that_breaks_a_stable_task_names_it():
    j = judge(change("B", fixes={"a": 0.6}), HISTORY, base={"a": "0"},
              change={"a": "1", "s": "0"})
    assert (j.decision, j.outcome, j.regressions, j.confirmed_fixes) == (
        "revert", "regression", ["s"], ["a"])


def test_the_record_shows_the_revert_over_the_verdict():
    j = judge(FIXES_A, HISTORY, base={"a": "0"}, change={"a": "1"})
    kept = ChangeRecord(iteration=0, entry=FIXES_A, judgement=j)
    assert (kept.verdict, kept.decision, kept.reason) == ("effective", "keep", j.reason)
    revert = RevertRecord(change_id="A", commit="a" * 40, revert_commit="b" * 40,
                          reason="manual rollback: breaks csv", manual=True)
    by_hand = kept.model_copy(update={"revert": revert})
    assert (by_hand.verdict, by_hand.decision, by_hand.reason) == (
        "manual", "revert", "manual rollback: breaks csv")
    pending = ChangeRecord(iteration=0, entry=FIXES_A)
    assert (pending.verdict, pending.decision, pending.reason) == ("pending", "pending", "")
