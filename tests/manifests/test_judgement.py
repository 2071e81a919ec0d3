"""Judgements by the threshold rule: the verdict attribute() reaches, stored with every task's
counts and class, so readers never recompute; the record a reader shows derives from them."""
from __future__ import annotations

from manifests.attribution import TaskClass, attribute
from manifests.judgement import THRESHOLD_RULE, Judgement, judge_by_rule
from manifests.record import ChangeRecord
from manifests.revert import RevertRecord

from .builders import change, counts, noise

A = change("A", fixes={"a": 0.8}, regs={"c": 0.2})
B = change("B", fixes={"d": 0.5})
BEFORE = counts("a=0/2 b=0/2 c=2/2 d=0/2")
AFTER = counts("a=2/2 b=1/2 c=2/2 d=0/2 e=1/1")


def test_the_judgement_holds_the_verdict_and_every_task_it_used():
    judgements = judge_by_rule([A, B], BEFORE, AFTER, noise("a b c d", flips="b"), run_id="r",
                               iteration=3, before_iteration=1, extra_rollouts={"a": 2, "b": 2})
    verdicts = attribute([A, B], BEFORE, AFTER, noise("a b c d", flips="b"))
    for judgement, verdict in zip(judgements, verdicts):
        assert judgement.model_dump(include=set(verdict.model_dump()) - {"per_task"}) == \
            verdict.model_dump(exclude={"per_task"})
    a, b = judgements
    assert (a.method, a.iteration, a.before_iteration, a.run_id) == (THRESHOLD_RULE, 3, 1, "r")
    assert [t.task_id for t in a.tasks] == ["a", "b", "c", "d", "e"]  # every task, not only claims
    by_task = {t.task_id: t for t in a.tasks}
    assert (str(by_task["a"].before), str(by_task["a"].after), by_task["a"].cls) == (
        "0/2", "2/2", TaskClass.FIXED)
    assert by_task["b"].cls is TaskClass.UNSTABLE and by_task["b"].predicted is None
    assert by_task["e"].before is None and by_task["e"].cls is TaskClass.UNJUDGED
    assert (by_task["c"].predicted, by_task["c"].probability) == ("regression", 0.2)
    assert [t.task_id for t in a.shown_tasks()] == ["a", "c"]
    assert (a.rollouts_spent, b.rollouts_spent) == (2, 0)  # extra rollouts of its own claims
    assert a.noise_band == 1.0
    assert Judgement.model_validate_json(a.model_dump_json()) == a  # stored and read back whole


def test_the_record_shows_the_revert_over_the_verdict():
    [j] = judge_by_rule([A], BEFORE, AFTER, noise(), run_id="r", iteration=1, before_iteration=0)
    kept = ChangeRecord(iteration=0, entry=A, judgement=j)
    assert (kept.verdict, kept.decision, kept.reason) == (j.verdict, "keep", j.reason)
    revert = RevertRecord(change_id="A", commit="a" * 40, revert_commit="b" * 40,
                          reason="manual rollback: breaks csv", manual=True)
    by_hand = kept.model_copy(update={"revert": revert})
    assert (by_hand.verdict, by_hand.decision, by_hand.reason) == (
        "manual", "revert", "manual rollback: breaks csv")
    pending = ChangeRecord(iteration=0, entry=A)
    assert (pending.verdict, pending.decision, pending.reason) == ("pending", "pending", "")
