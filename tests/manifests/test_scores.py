"""Scores read from stored judgements against hand-computed values, their bounds under random
predictions, and the one scoreboard's markdown."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from manifests.attribution import attribute
from manifests.judgement import judge_by_rule
from manifests.noise import TaskCounts
from manifests.design import TrialDesign
from manifests.record import ChangeRecord
from manifests.revert import RevertRecord
from manifests.scores import NOTHING_JUDGED, Scoreboard, Scores, score, scores_from_verdicts
from manifests.verdict import TaskEvidence, TrialVerdict

from .builders import change, counts, noise

A = change("A", fixes={"a": 0.8, "b": 0.4}, regs={"c": 0.2}, delta=10.0)
B = change("B", fixes={"d": 0.5}, regs={"e": 0.3}, delta=-2.5)
BEFORE = counts("a=0/2 b=0/2 c=2/2 d=0/2 e=2/2 f=0/2 g=2/2")
AFTER = counts("a=2/2 b=0/2 c=2/2 d=2/2 e=0/2 f=1/2 g=1/2")
NOISE = noise("a b c d e f g", flips="d")


def judged(changes, before, after, nm, iteration=1) -> list[ChangeRecord]:
    """The changes made in `iteration - 1`, judged by the rule in `iteration`, as stored."""
    judgements = judge_by_rule(changes, before, after, nm, run_id="run1", iteration=iteration,
                               before_iteration=iteration - 1)
    return [ChangeRecord(iteration=iteration - 1, entry=c, judgement=j)
            for c, j in zip(changes, judgements)]


def test_iteration_scores_match_hand_computation():
    s = score(judged([A, B], BEFORE, AFTER, NOISE))
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
    [record] = judged([change("A")], counts("a=0/2"), counts("a=0/2"), noise())
    s = score([record])
    assert (s.fix_precision, s.fix_recall, s.reg_precision, s.reg_recall, s.brier) == (None,) * 5
    assert "| run | n/a | n/a | n/a | n/a | n/a |" in Scoreboard.of([record]).to_markdown()


def test_a_board_without_judged_changes_says_so():
    pending = ChangeRecord(iteration=0, entry=change("A", fixes={"a": 0.5}))
    assert Scoreboard.of([pending]).to_markdown() == NOTHING_JUDGED + "\n"


def test_scoreboard_rows_and_cumulative_scores():
    C = change("C", fixes={"b": 0.9})
    after2 = {**AFTER, "b": TaskCounts(passes=2, total=2)}
    board = Scoreboard.of(judged([A, B], BEFORE, AFTER, NOISE) + judged([C], AFTER, after2, NOISE, 2))
    assert [(r.change_id, r.verdict) for r in board.rows] == [
        ("A", "mixed"), ("B", "harmful"), ("C", "effective")]
    run = board.cumulative
    assert (run.fix_confirmed, run.fix_predicted, run.fix_precision) == (2, 3, 2 / 3)
    assert run.fix_recall == 2 / 3  # a and b recalled of a, f, b
    text = board.to_markdown()
    assert "| judged in 2 | 100.0% | 100.0% | n/a | n/a | 0.010 |" in text
    assert "| run | 66.7% | 66.7% |" in text
    assert "| 1 | C | system_prompt | effective | keep | b | b |  |" in text
    assert text.index("| 1 | C |") < text.index("| 0 | A |")  # newest first


def test_a_reverted_change_shows_the_revert_and_keeps_its_scores():
    [a, b] = judged([A, B], BEFORE, AFTER, NOISE)
    cascaded = RevertRecord(change_id="A", commit="c" * 40, revert_commit="d" * 40,
                            reason="reverted with B because it depends on it", cascaded_from="B")
    by_hand = ChangeRecord(iteration=0, entry=change("H", fixes={"a": 0.5}), revert=RevertRecord(
        change_id="H", commit="e" * 40, revert_commit="f" * 40, reason="manual rollback: no",
        manual=True))
    board = Scoreboard.of([a.model_copy(update={"revert": cascaded}), b, by_hand])
    rows = {r.change_id: r for r in board.rows}
    assert (rows["A"].verdict, rows["A"].decision) == ("mixed", "revert")
    assert rows["A"].reason.startswith("reverted with B") and rows["A"].scores is not None
    assert (rows["H"].verdict, rows["H"].decision, rows["H"].scores) == ("manual", "revert", None)
    assert board.cumulative == score([a, b])  # a hand revert judges no prediction


def test_many_changes_are_cut_to_the_newest():
    records = judged([change(f"c{i:02d}", fixes={"a": 0.5}) for i in range(40)],
                     counts("a=0/2"), counts("a=2/2"), noise())
    text = Scoreboard.of(records).to_markdown(max_rows=30)
    assert text.count("| 0 | c") == 30 and "+ 10 earlier changes" in text


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
    s = score(judged([ch], b, a, noise(" ".join(TASKS), flips=" ".join(unstable))))
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
