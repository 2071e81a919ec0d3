"""Which library entries a run is offered (evolve/library/cue.py): the starter entries whose failure
patterns its failing train rollouts show, with the tasks they showed in; a library's copy of a
starter (its record) stands for it; entries the run applied already are left out; held-out and
trial rollouts never count."""
from __future__ import annotations

import time
from pathlib import Path

import pytest

from evoharness.evolve.library.cue import (cued_tasks, offers, reached_tasks, rollout_signatures,
                                task_signatures)
from evoharness.evolve.library.entry import Numbers, Trial
from evoharness.evolve.library.record import carry_over
from evoharness.evolve.library.starter import starter_diff, starter_entries
from evoharness.evolve.library.store import Library
from tests.debugger.conftest import RUN, Traces, output, shell

REFUSED_RM = [shell("echo x > out.txt"), output(""), shell("rm out.txt"), output("")]


@pytest.fixture
def traces(tmp_path: Path) -> Traces:
    store = Traces(tmp_path / "traces.duckdb")
    done = ("tool_call", "done", "", {"arguments": {"summary": "x"}})
    store.rollout("count", 0, "fail", events=[shell("wc -l poem.txt"), output("14"), done])
    missing = output("mv: cannot stat 'a': No such file or directory")
    store.rollout("loop", 0, "fail", exit_reason="max_steps", events=[shell("mv a b"), missing] * 4)
    store.rollout("loop", 1, "pass", events=REFUSED_RM)  # passing: not evidence
    store.rollout("secret", 0, "fail", split="heldout", events=REFUSED_RM)
    store.rollout("unseen", 0, "fail", split="validation", events=REFUSED_RM)
    store.rollout("count", 0, "fail", trial_change="c1", trial_arm="change", events=REFUSED_RM)
    yield store
    store.con.close()


def test_starter_entries_are_offered_for_the_patterns_failing_train_rollouts_show(
        traces: Traces) -> None:
    signatures = task_signatures(traces.con, RUN, 1)
    assert signatures["count"] == {"fail/done", "pattern:done_without_write"}
    assert "pattern:repeated_command" in signatures["loop"] and "secret" not in signatures
    assert "unseen" not in signatures  # a validation task: the trials' to read, not the offers'
    assert set(rollout_signatures(traces.con, RUN, 1, "validation")) == {"unseen"}
    offered = {o.entry_id: o for o in offers(None, traces.con, RUN, 1)}
    # output-guard answers deleting one's own output, seen only in held-out and trial rollouts;
    # five entries share two patterns with the failures (the workspace preview: loop's first
    # command, `mv a b`, wrote before anything was looked at; guarded-fresh-start and
    # sure-failure-rescue: count's early done and loop's repeats): five at most, ties by name
    assert set(offered) == {"guarded-fresh-start", "repeat-breaker", "task-reminder",
                            "workspace-preview", "sure-failure-rescue"}
    rescue = offered["sure-failure-rescue"]
    assert rescue.summary.endswith("[not tried yet] Off the tasks it was shaped on: no validation "
                                   "or held-out record. Seen here in: loop, count.")
    assert rescue.tasks == ("loop", "count")
    assert rescue.edits[0]["path"] == "middleware/done_guard.py"
    assert "+++ b/middleware/done_guard.json" in rescue.text
    assert offers(None, traces.con, RUN, 1, starter=False) == []


def test_a_librarys_record_of_a_starter_stands_for_it_and_applied_entries_are_left_out(
        traces: Traces, tmp_path: Path) -> None:
    [guard] = [e for e in starter_entries() if e.id == "done-guard"]
    tried = Trial(run_id="night1", change_id="c2", iteration=1, model="embedded", suite="suite",
                  suite_path="/suite", decision="revert", applied=True, filed_at=time.time(),
                  numbers=Numbers(method="paired-trial", verdict="not_shown"))
    library = tmp_path / "library"
    Library(library).save([(guard.model_copy(update={"trials": [tried]}),
                            starter_diff(guard.id))], "file night1")
    applied = {"repeat-breaker", "workspace-preview", "fresh-start", "guarded-fresh-start",
               "resample-repeats", "sure-failure-rescue"}
    offered = {o.entry_id: o for o in offers(library, traces.con, RUN, 1, exclude=applied)}
    assert not applied & set(offered)
    assert "reverted 1x (embedded on suite (night1))" in offered["done-guard"].summary
    assert "+++ b/middleware/done_guard.py" in offered["done-guard"].text  # the diff it was filed with
    only_mine = offers(library, traces.con, RUN, 1, starter=False)
    assert [o.entry_id for o in only_mine] == ["done-guard"]


def test_an_offer_names_first_the_tasks_where_most_rollouts_failed_as_the_entry_answers(
        traces: Traces) -> None:
    """Each failed rollout counts once, however many of the cue's patterns it shows: `stuck`,
    whose two rollouts both loop, leads though no evaluation passed it; `loop` and `hard` loop
    once each (`loop`'s repeated command and its step limit are one failure), and `loop` comes
    before `hard`, which shares as much and comes first by name, because the run passed it once."""
    for attempt in (0, 1):
        missing = output(f"mv: cannot stat 's{attempt}': No such file or directory")
        traces.rollout("stuck", attempt, "fail", exit_reason="max_steps",
                       events=[shell(f"mv s{attempt} t"), missing] * 4)
    missing = output("mv: cannot stat 'c': No such file or directory")
    traces.rollout("hard", 0, "timeout", exit_reason="rollout_timeout",
                   events=[shell("mv c d"), missing] * 4)
    traces.rollout("hard", 0, "pass", trial_change="c1", trial_arm="change")
    traces.rollout("secret", 1, "pass", split="heldout")
    [breaker] = [e for e in starter_entries() if e.id == "repeat-breaker"]
    signatures = rollout_signatures(traces.con, RUN, 1)
    assert signatures["loop"] == {"it001-loop-a00": {
        "fail/max_steps", "pattern:repeated_command", "pattern:max_steps",
        "pattern:missing_file", "pattern:blind_write"}}
    assert cued_tasks(breaker, signatures) == ["stuck", "hard", "loop"]  # by rollouts alone
    assert reached_tasks(traces.con, RUN) == {"loop"}  # held-out and trial passes do not count
    offered = {o.entry_id: o for o in offers(None, traces.con, RUN, 1)}
    assert offered["repeat-breaker"].tasks == ("stuck", "loop", "hard")


def _trial(run_id: str, where: str, effect: float, half: float) -> Trial:
    return Trial(run_id=run_id, change_id="c1", iteration=1, model="embedded", suite="suite",
                 suite_path="/suite", decision="keep", applied=True, filed_at=time.time(),
                 where=where, numbers=Numbers(method="paired-trial", verdict="effective",
                                              effect=effect, lo=effect - half, hi=effect + half,
                                              confidence=0.95, interval_over="pairs"))


def test_offers_lead_with_what_carried_over_and_say_why(traces: Traces, tmp_path: Path) -> None:
    """The record off the shaping tasks ranks the offers: an entry whose validation record shows
    a gain leads, whatever its cue; entries with no such record follow in the cue's order; one
    whose record shows no gain comes after them (here below the five offered). Two runs' trials
    pool by inverse variance."""
    starters = {e.id: e for e in starter_entries()}
    record = {
        # a strong train-side record counts for nothing here
        "guarded-fresh-start": [_trial("n1", "predicted", 0.4, 0.1)],
        "task-reminder": [_trial("n1", "validation", 0.10, 0.08),
                          _trial("n2", "validation", 0.14, 0.08)],
        "repeat-breaker": [_trial("n1", "heldout", 0.0, 0.1)],
    }
    library = tmp_path / "library"
    Library(library).save([(starters[e].model_copy(update={"trials": t}), starter_diff(e))
                           for e, t in record.items()], "file")
    offered = offers(library, traces.con, RUN, 1)
    order = [o.entry_id for o in offered]
    assert order == ["task-reminder", "guarded-fresh-start", "sure-failure-rescue",
                     "workspace-preview", "done-guard"]
    lead = offered[0].summary
    # the pooled effect is +12 with half-width 0.08 / sqrt(2) = 0.057: [+6, +18]
    assert "Off the tasks it was shaped on: validation +12 [+6, +18] over 2 runs." in lead
    assert "no validation or held-out record" in offered[1].summary
    breaker = Library(library).entry("repeat-breaker")
    assert carry_over(breaker).reason() == "held out +0 [-10, +10] over 1 run"
    assert carry_over(breaker).tier == "not_shown"
