"""Scores read from stored trial judgements against hand-computed values, their bounds, and the
one scoreboard's markdown."""
from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.revert import RevertRecord
from evoharness.manifests.scores import NOTHING_JUDGED, Scoreboard, Scores, score

from .builders import change, judge

HISTORY = "a=0/2 b=0/2 c=0/2 s=2/2 u=2/2"


def record(entry, base=None, changed=None, iteration=0, **kw) -> ChangeRecord:
    """`entry` made and judged in `iteration` by its real trial (see builders.judge)."""
    return ChangeRecord(iteration=iteration, entry=entry, judgement=judge(
        entry, HISTORY, base, changed, iteration=iteration, **kw))


# A fixes a (kept; predicted regression on s did not happen); B fixes b but breaks u, which it
# predicted; C is a placebo on c (both arms always fail).
A = change("A", fixes={"a": 0.8}, regs={"s": 0.3}, delta=10.0)
B = change("B", fixes={"b": 0.6}, regs={"u": 0.7}, delta=5.0)
C = change("C", fixes={"c": 0.5}, delta=-2.5)


def three() -> list[ChangeRecord]:
    return [record(A, {"a": "0"}, {"a": "1"}),
            record(B, {"b": "0"}, {"b": "1", "u": "0"}),
            record(C, {"c": "0"}, {"c": "0"})]


def test_iteration_scores_match_hand_computation():
    a, b, c = three()
    assert [r.decision for r in (a, b, c)] == ["keep", "revert", "revert"]
    s = score([a, b, c])
    assert (s.changes, s.kept, s.keep_rate) == (3, 1, 1 / 3)
    # fixes: a and b confirmed on their own pairs, c showed no gain (0 wins, 0 losses)
    assert (s.fix_predicted, s.fix_confirmed, s.fix_precision) == (3, 2, 2 / 3)
    # regressions: s held (A's claim missed), u fell (B's claim hit); observed u only, predicted
    assert (s.reg_precision, s.reg_recall) == (0.5, 1.0)
    # Brier over a .8->1, b .6->1, c .5->0, s .3->0, u .7->1
    assert s.brier == pytest.approx((0.04 + 0.16 + 0.25 + 0.09 + 0.09) / 5)
    assert s.unjudged == 0 and s.expected_delta == 12.5
    # observed: every pair of a and b a win (+1 each), c none; per 5 train tasks, in points
    assert s.observed_delta == pytest.approx(100 * 2 / 5)
    assert s.rollouts == sum(r.judgement.verdict.rollouts.used for r in (a, b, c))


def test_a_gain_too_small_to_confirm_alone_is_unjudged_not_a_miss():
    # Two predicted tasks, each gaining in half its pairs: the change as a whole may pass, but
    # neither task's own pairs confirm it.
    two = change("T", fixes={"a": 0.9, "b": 0.9})
    r = record(two, {"a": "0", "b": "0"}, {"a": "10", "b": "01"})
    results = {t.task_id: t.result for t in r.judgement.verdict.tasks if t.role == "probe"}
    assert set(results.values()) <= {"fixed", "unclear"}
    s = score([r])
    assert s.fix_predicted + s.unjudged == 2 and s.fix_confirmed == s.fix_predicted


def test_undefined_ratios_are_none_and_shown_as_na():
    r = record(change("N"), None, None)  # predicts nothing: untestable, nothing to score
    assert r.judgement.outcome == "untestable"
    s = score([r])
    assert (s.fix_precision, s.reg_precision, s.reg_recall, s.brier) == (None,) * 4
    assert "| run | 1 | 0 | n/a | n/a | n/a | n/a |" in Scoreboard.of([r]).to_markdown()


def test_a_board_without_judged_changes_says_so():
    pending = ChangeRecord(iteration=0, entry=change("A", fixes={"a": 0.5}))
    assert Scoreboard.of([pending]).to_markdown() == NOTHING_JUDGED + "\n"


def test_scoreboard_rows_per_iteration_and_run():
    later = record(change("D", fixes={"b": 0.9}), {"b": "0"}, {"b": "1"}, iteration=1)
    board = Scoreboard.of([*three(), later])
    assert [(r.change_id, r.verdict, r.decision) for r in board.rows] == [
        ("A", "effective", "keep"), ("B", "regression", "revert"), ("C", "not_shown", "revert"),
        ("D", "effective", "keep")]
    assert board.iterations.keys() == {0, 1}
    run = board.cumulative
    assert (run.changes, run.kept, run.fix_confirmed, run.fix_predicted) == (4, 2, 3, 4)
    text = board.to_markdown()
    assert "| iteration 1 | 1 | 1 | 100.0% | n/a | n/a | 0.010 |" in text
    assert "| run | 4 | 2 | 75.0% | 50.0% | 100.0% |" in text
    rows = {r.change_id: r for r in board.rows}
    assert f"| 1 | D | system_prompt | effective | keep | b | b |  | {rows['D'].p_value:.3f} |" in text
    assert text.index("| 1 | D |") < text.index("| 0 | A |")  # newest first


def test_a_reverted_change_shows_the_revert_and_keeps_its_scores():
    a, b, _ = three()
    cascaded = RevertRecord(change_id="A", commit="c" * 40, revert_commit="d" * 40,
                            reason="reverted with B because it depends on it", cascaded_from="B")
    by_hand = ChangeRecord(iteration=0, entry=change("H", fixes={"a": 0.5}), revert=RevertRecord(
        change_id="H", commit="e" * 40, revert_commit="f" * 40, reason="manual rollback: no",
        manual=True))
    board = Scoreboard.of([a.model_copy(update={"revert": cascaded}), b, by_hand])
    rows = {r.change_id: r for r in board.rows}
    assert (rows["A"].verdict, rows["A"].decision) == ("effective", "revert")
    assert rows["A"].reason.startswith("reverted with B") and rows["A"].scores is not None
    assert (rows["H"].verdict, rows["H"].decision, rows["H"].scores) == ("manual", "revert", None)
    assert board.cumulative == score([a, b])  # a hand revert judges no prediction


def test_many_changes_are_cut_to_the_newest():
    records = [record(change(f"c{i:02d}", fixes={"a": 0.5}), {"a": "0"}, {"a": "0"})
               for i in range(40)]
    text = Scoreboard.of(records).to_markdown(max_rows=30)
    assert text.count("| 0 | c") == 30 and "+ 10 earlier changes" in text


PATTERN = st.text(alphabet="01", min_size=1, max_size=4)
TASKS = ["a", "b", "c", "s", "u"]


@settings(max_examples=60, deadline=None)
@given(claims=st.lists(st.tuples(st.sampled_from(TASKS), st.sampled_from(["fix", "reg"]),
                                 st.floats(0, 1)), max_size=4, unique_by=lambda c: c[0]),
       base=st.fixed_dictionaries({t: PATTERN for t in TASKS}),
       changed=st.fixed_dictionaries({t: PATTERN for t in TASKS}))
def test_scores_stay_in_the_unit_interval_and_a_change_without_fixes_is_never_kept(
        claims, base, changed):
    entry = change("P", fixes={t: p for t, k, p in claims if k == "fix"},
                   regs={t: p for t, k, p in claims if k == "reg"})
    r = record(entry, base, changed)
    s = score([r])
    for value in (s.fix_precision, s.reg_precision, s.reg_recall, s.brier, s.keep_rate):
        assert value is None or 0.0 <= value <= 1.0
    if not entry.predicted_fixes:
        assert (r.verdict, r.decision) == ("untestable", "revert")


def test_scores_add_up():
    one = Scores(fix_predicted=2, fix_confirmed=1, brier_sum=0.5, brier_n=2, changes=1)
    assert one.plus(one).fix_precision == 0.5 and one.plus(one).brier == 0.25
    assert one.plus(one).changes == 2
