"""Scores against hand-computed values, and their bounds under random predictions."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from manifests.attribution import attribute
from manifests.noise import TaskCounts
from manifests.design import TrialDesign
from manifests.scores import Scoreboard, Scores, score_changes, scores_from_verdicts
from manifests.verdict import TaskEvidence, TrialVerdict

from .builders import change, counts, noise

A = change("A", fixes={"a": 0.8, "b": 0.4}, regs={"c": 0.2}, delta=10.0)
B = change("B", fixes={"d": 0.5}, regs={"e": 0.3}, delta=-2.5)
BEFORE = counts("a=0/2 b=0/2 c=2/2 d=0/2 e=2/2 f=0/2 g=2/2")
AFTER = counts("a=2/2 b=0/2 c=2/2 d=2/2 e=0/2 f=1/2 g=1/2")
NOISE = noise("a b c d e f g", flips="d")


def test_iteration_scores_match_hand_computation():
    s = score_changes([A, B], BEFORE, AFTER, NOISE)
    # fixes: a confirmed, b missed, d unstable (unjudged); observed fixes a and f (f unpredicted)
    assert (s.fix_precision, s.fix_recall) == (0.5, 0.5)
    # regressions: e confirmed, c missed; observed e and g (g unpredicted)
    assert (s.reg_precision, s.reg_recall) == (0.5, 0.5)
    # Brier over a .8->1, b .4->0, c .2->0, e .3->1: (.04 + .16 + .04 + .49) / 4
    assert s.brier == pytest.approx(0.1825)
    assert s.unjudged == 1
    assert s.expected_delta == 7.5
    # pass rates: before 3/7 tasks' worth (c, e, g = 1.0), after a, c, d = 1.0 plus f, g = 0.5
    assert s.observed_delta == pytest.approx(100 * (4 / 7 - 3 / 7))


def test_undefined_ratios_are_none_and_shown_as_na():
    s = score_changes([change("A")], counts("a=0/2"), counts("a=0/2"), noise())
    assert (s.fix_precision, s.fix_recall, s.reg_precision, s.reg_recall, s.brier) == (None,) * 5
    board = Scoreboard(run_id="run1")
    board.add_iteration(1, [change("A")], [], counts("a=0/2"), counts("a=0/2"), noise())
    assert "n/a" in board.to_markdown() and "pending" in board.to_markdown()


def test_scoreboard_rows_and_cumulative_scores():
    board = Scoreboard(run_id="run1")
    board.add_iteration(1, [A, B], attribute([A, B], BEFORE, AFTER, NOISE), BEFORE, AFTER, NOISE)
    C = change("C", fixes={"b": 0.9})
    after2 = {**AFTER, "b": TaskCounts(passes=2, total=2)}
    board.add_iteration(2, [C], attribute([C], AFTER, after2, NOISE), AFTER, after2, NOISE)
    assert [(r.change_id, r.verdict) for r in board.rows] == [("A", "mixed"), ("B", "harmful"), ("C", "effective")]
    run = board.cumulative
    assert (run.fix_confirmed, run.fix_predicted, run.fix_precision) == (2, 3, 2 / 3)
    assert run.fix_recall == 2 / 3  # a and b recalled of a, f, b
    text = board.to_markdown()
    assert "| 2 | C | system_prompt | effective | keep | 100.0%" in text
    assert "| run | 66.7% | 66.7% |" in text


PASSES = st.integers(0, 3)
TASKS = [f"t{i}" for i in range(6)]


@settings(max_examples=200, deadline=None)
@given(
    before=st.lists(PASSES, min_size=6, max_size=6), after=st.lists(PASSES, min_size=6, max_size=6),
    claims=st.lists(st.tuples(st.sampled_from(TASKS), st.sampled_from(["fix", "reg"]),
                              st.floats(0, 1)), max_size=6, unique_by=lambda c: c[0]),
    unstable=st.sets(st.sampled_from(TASKS)),
)
def test_precision_recall_and_brier_stay_in_unit_interval(before, after, claims, unstable):
    ch = change("A", fixes={t: p for t, k, p in claims if k == "fix"},
                regs={t: p for t, k, p in claims if k == "reg"})
    b = {t: TaskCounts(passes=p, total=3) for t, p in zip(TASKS, before)}
    a = {t: TaskCounts(passes=p, total=3) for t, p in zip(TASKS, after)}
    s = score_changes([ch], b, a, noise(" ".join(TASKS), flips=" ".join(unstable)))
    for value in (s.fix_precision, s.fix_recall, s.reg_precision, s.reg_recall, s.brier):
        assert value is None or 0.0 <= value <= 1.0
    [v] = attribute([ch], b, a, noise(" ".join(TASKS), flips=" ".join(unstable)))
    if not ch.predicted_fixes:
        assert v.verdict != "effective" and v.decision == "revert"


@given(st.lists(st.floats(0, 1), max_size=4))
def test_a_change_predicting_only_regressions_or_nothing_is_never_kept(probs):
    ch = change("A", regs={f"t{i}": p for i, p in enumerate(probs)})
    before = {t: TaskCounts(passes=0, total=2) for t in TASKS}
    after = {t: TaskCounts(passes=2, total=2) for t in TASKS}  # everything fixed, by someone
    [v] = attribute([ch], before, after, noise())
    assert (v.verdict, v.decision) == ("ineffective", "revert")


def test_scores_add_up():
    one = Scores(fix_predicted=2, fix_confirmed=1, brier_sum=0.5, brier_n=2)
    assert one.plus(one).fix_precision == 0.5 and one.plus(one).brier == 0.25


def _verdict(cid: str, decision: str, outcome: str, *rows: tuple) -> TrialVerdict:
    tasks = [TaskEvidence(task_id=t, role=role, predicted=kind, probability=p, history="2/2",
                          history_mean=0.75, result=result) for t, role, kind, p, result in rows]
    return TrialVerdict(change_id=cid, base_tree="tree0", decision=decision, outcome=outcome,
                        reason="hand-made", evalue=1.0, p_value=1.0, tasks=tasks,
                        design=TrialDesign())


def test_scores_from_trial_verdicts_match_hand_computation():
    verdicts = [
        _verdict("V1", "keep", "effective", ("a", "probe", "fix", 0.8, "fixed"),
                 ("b", "screen", "regression", 0.3, "held"), ("c", "screen", None, None, "held")),
        _verdict("V2", "revert", "regression", ("d", "probe", "fix", 0.6, "fixed"),
                 ("e", "screen", None, None, "regressed"),
                 ("f", "screen", "regression", 0.7, "regressed")),
        _verdict("V3", "revert", "not_shown", ("g", "probe", "fix", 0.5, "not_fixed"),
                 ("h", "claim", "regression", 0.2, "unjudged")),
    ]
    s = scores_from_verdicts(verdicts)
    assert (s.changes, s.kept, s.keep_rate) == (3, 1, 1 / 3)
    assert (s.fix_predicted, s.fix_confirmed, s.fix_precision) == (3, 2, 2 / 3)
    assert s.fix_recall is None  # a trial never runs a change on a fix it did not predict
    assert (s.reg_predicted, s.reg_confirmed, s.reg_precision) == (2, 1, 0.5)
    assert (s.regs_observed, s.regs_recalled, s.reg_recall) == (2, 1, 0.5)  # e and f; f predicted
    # Brier over a .8->1, d .6->1, g .5->0, b .3->0, f .7->1
    assert s.brier == pytest.approx((0.04 + 0.16 + 0.25 + 0.09 + 0.09) / 5)
    assert s.unjudged == 1
    assert scores_from_verdicts([]).keep_rate is None
