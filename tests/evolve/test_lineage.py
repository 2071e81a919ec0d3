"""The path of a run (evolve/lineage.py): each change's prediction, trial effect and decision as
its records hold them, and what decided it: its trial, a cascade from another revert, or a hand."""
from __future__ import annotations

import pytest

from evoharness.evolve.lineage import lineage
from evoharness.evolve.run import read_run
from evoharness.manifests.revert import RevertRecord
from tests.fixtures.recorded_run import build_recorded_run


@pytest.fixture(scope="module")
def records(tmp_path_factory):
    run = build_recorded_run(tmp_path_factory.mktemp("runs") / "full")
    return {r.id: r for r in read_run(run)[1].changes()}


def test_rows_carry_what_the_records_hold(records):
    rows = {row.change_id: row for row in lineage(list(records.values()))}
    prompt = rows["c0-prompt"]
    assert (prompt.iteration, prompt.component, prompt.decision, prompt.by) == (
        0, "system_prompt", "keep", "its trial")
    assert prompt.prediction() == "fix alpha p=0.70 (+5 points)"
    assert prompt.prediction(short=True) == "alpha .70"
    judged = records["c0-prompt"].judgement.verdict
    assert prompt.gain == judged.effect and prompt.p_value == judged.p_value
    assert prompt.effect(short=True) == f"+100 p={judged.p_value:.3f}".replace("0.", ".", 1)
    tool = rows["c1-tool"]
    assert tool.regressed == ["beta"] and tool.effect().endswith("; regressed beta")
    one_each = tool.model_copy(update={"paired": 1, "wins": 1, "losses": 1})
    assert " on 1 task (1 win, 1 loss; p = " in one_each.effect()
    assert " tasks (2 wins, 0 losses; p = " in one_each.model_copy(
        update={"paired": 2, "wins": 2, "losses": 0}).effect()
    assert tool.prediction(short=True) == "gamma .60, -beta .20"
    pending = rows["c2-memory"]
    assert (pending.effect(), pending.decided_by(), pending.decided_by(short=True)) == (
        "not decided yet", "not judged yet", "-")


def test_a_revert_says_whether_a_cascade_or_a_hand_made_it(records):
    kept = records["c0-prompt"]
    revert = RevertRecord(change_id="c0-prompt", commit=kept.entry.commit, revert_commit="r" * 40,
                          reason="x")
    by_hand = kept.model_copy(update={"revert": revert.model_copy(update={"manual": True})})
    cascaded = kept.model_copy(update={"revert": revert.model_copy(
        update={"cascaded_from": "c0-memory"})})
    unjudged = records["c2-memory"].model_copy(update={"revert": revert})
    rows = lineage([by_hand, cascaded, unjudged])
    assert [(r.decision, r.by) for r in rows] == [
        ("revert", "by hand"), ("revert", "a cascade from c0-memory"), ("revert", "by hand")]
    assert [r.decided_by(short=True) for r in rows] == ["hand", "cascade from c0-memory", "hand"]
    assert rows[2].effect() == "not tried"


def test_a_change_judged_on_validation_tasks_shows_that_test_beside_its_own():
    from evoharness.evolve.lineage import LineageRow
    from evoharness.manifests.verdict import PairedTest

    row = LineageRow(iteration=1, change_id="c1", component="memory", fixes={"a": 0.7},
                     regressions={}, expected_delta=5, tried=True, gain=0.5, paired=1, wins=3,
                     losses=0, p_value=0.01, outcome="not_carried", decision="revert",
                     by="its trial", validation="not_shown", validation_wins=1,
                     validation_losses=2, validation_p=0.8)
    assert row.effect(short=True) == "+50 p=.010 val=.800"
    assert row.effect().endswith("; validation not shown (1 win, 2 losses; p = 0.8000)")
    assert PairedTest(result="not_run", alpha=0.05).line() == "not run"
