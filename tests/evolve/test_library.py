"""The improvement library (evolve/library) across two runs on the scripted model (a TEST DOUBLE:
tests/fixtures/e2e_agents.py): a change kept in one run is filed, offered to the evolve agent of a
second run on another suite and model (only then does its script apply it), applied, judged by
the same loop, and the library records where it held and where it did not."""
from __future__ import annotations

from pathlib import Path

import git
import pytest
from typer.testing import CliRunner

from evoharness.evolve.cli import app
from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.library.cue import OFFERED, offers
from evoharness.evolve.library.entry import Cue, LibraryEntry, Numbers, Trial
from evoharness.evolve.library.store import Library
from evoharness.evolve.loop import evolve
from evoharness.evolve.run import init_run, read_run
from tests.fixtures.e2e_agents import (
    HELPFUL_RULE, action, agents, change, done, evolve_rule, solve_rule, write_script,
)
from tests.fixtures.suites import write_suite
from tests.manifests.builders import change as manifest_entry
from tests.traces.helpers import result, write
from evoharness.traces.store import TraceStore
from evoharness.workspace.repo import HarnessRepo

OTHER_RULE = "Read the whole instruction twice before acting."


def make_run(root: Path, suite: Path, model: str, library: Path) -> Path:
    config = RunConfig(run_id=root.name, tasks=suite, model=model, k=1, workers=2,
                       rollout_timeout=60, calibration=False, library=library,
                       stop=StopRules(iterations=1))
    return init_run(root, config).root


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_a_kept_change_is_filed_offered_applied_on_another_suite_and_its_revert_recorded(
        tmp_path: Path) -> None:
    library = tmp_path / "library"
    first_suite = write_suite(tmp_path / "suite-one", ["alpha", "beta"], ["gamma"])
    first = make_run(tmp_path / "first", first_suite, agents(
        tmp_path / "model-one.yaml", [change(HELPFUL_RULE, ["write-alpha", "write-beta"]), done()],
        solves_with=[HELPFUL_RULE]), library)
    evolve(first, iterations=None, resume=False, say=lambda _: None)

    filed = cli("library", "add", str(first))

    [entry] = Library(library).entries()
    assert f"added {entry.id}" in filed
    assert entry.edits == [{"op": "append_rule", "text": HELPFUL_RULE}]
    # The code agent called done at once: its outcome class and the pattern it shows.
    assert entry.cue.signature == ["fail/done", "pattern:done_first"]
    assert entry.cue.tasks == ["write-alpha", "write-beta"]
    [kept] = entry.trials
    assert (kept.decision, kept.applied, kept.suite) == ("keep", False, "suite-one")
    numbers = kept.numbers
    # The trial's own figures: every one of its pairs a win (3 per predicted task, 12 rollouts),
    # its sequential p-value within alpha.
    assert numbers.effect == 1.0 and numbers.rollouts == 12 and numbers.verdict == "effective"
    assert numbers.method == "paired-trial" and numbers.p_value <= 0.05
    # Over its 6 pairs, all wins, at 1 - 0.05 / 25 for the probe's 25 possible looks (a cap of
    # 100 rollouts, one pair of each task a look): the gain excludes 0, however early it stopped.
    assert numbers.interval_over == "pairs" and numbers.confidence == pytest.approx(0.998)
    assert 0 < numbers.lo < 0.5 and numbers.hi == 1.0
    assert HELPFUL_RULE in Library(library).diff(entry.id)

    # A series of two trials of it, registered before the next: the next is judged at alpha / 2.
    assert "(halving spending: 0.025, 0.025)" in cli("library", "series", str(library), entry.id,
                                                     "--size", "2", "--spending", "halving")
    # A second run: another suite, and a code agent this rule does not help.
    second_suite = write_suite(tmp_path / "suite-two", ["omega", "sigma"], ["kappa"])
    applies = change(HELPFUL_RULE, ["write-omega"], library_entry=entry.id)
    second = make_run(tmp_path / "second", second_suite, write_script(
        tmp_path / "model-two.yaml",
        [evolve_rule([action("library", entry=entry.id), applies, done()], also_has=[entry.id]),
         solve_rule(has=[OTHER_RULE])]), library)
    evolve(second, iterations=None, resume=False, say=lambda _: None)

    [record] = read_run(second)[1].changes()
    assert record.decision == "revert"  # judged by the loop like any other change
    assert record.judgement.verdict.design.alpha == 0.025  # at the series' first level
    commit = HarnessRepo(second / "workspace").commit_info(record.entry.commit)
    assert commit.trailers["Library-Entry"] == entry.id

    assert f"{entry.id}: revert" in cli("library", "add", str(second))
    entry = Library(library).entry(entry.id)
    assert [(t.run_id, t.decision, t.applied, t.suite) for t in entry.trials] == [
        ("first", "keep", False, "suite-one"), ("second", "revert", True, "suite-two")]
    assert entry.trials[1].model.endswith("model-two.yaml")
    listed = cli("library", "list", str(library))
    assert "kept 1x" in listed and "reverted 1x" in listed and "on suite-two (second)" in listed
    shown = cli("library", "show", str(library), entry.id)
    assert "## Diff" in shown
    assert "level 0.025 (series trial 1 of 2, pre-registered level 0.025)" in shown
    assert entry.next_level() == 0.025
    cli("library", "add", str(second))  # filing again adds nothing
    assert len(Library(library).entry(entry.id).trials) == 2
    assert len(list(git.Repo(library).iter_commits())) == 3  # two filings and the series


def library_entry(entry_id: str, signature: list[str], decisions: list[str]) -> LibraryEntry:
    """A filed entry whose cue is `signature`, tried once per decision."""
    trials = [Trial(run_id=f"r{i}", change_id=entry_id, iteration=0, model="scripted",
                    suite="s", suite_path="/s", decision=d, applied=i > 0,
                    numbers=Numbers(method="paired-trial", verdict="effective"), filed_at=0.0)
              for i, d in enumerate(decisions)]
    return LibraryEntry(id=entry_id, cue=Cue(root_cause="r", signature=signature),
                        component="system_prompt", targeted_fix="f",
                        edits=[{"op": "append_rule", "text": entry_id}],
                        manifest=manifest_entry(entry_id), trials=trials)


def test_at_most_five_matching_entries_are_offered_best_first(tmp_path: Path) -> None:
    """docs/after-the-run.md: the entries whose failure signature matches the iteration's failing
    train rollouts, at most 5: the most shared classes first, then the better record."""
    entries = [library_entry(f"one-class-{i}", ["fail/done"], ["keep"] * (i % 3) + ["revert"])
               for i in range(5)]
    entries += [library_entry("two-classes", ["fail/done", "timeout/wall_time"], ["revert"]),
                library_entry("best-record", ["fail/done"], ["keep", "keep", "keep"]),
                library_entry("no-match", ["timeout/rollout_timeout"], ["keep"] * 5)]
    Library(tmp_path / "library").save([(e, "diff\n") for e in entries], "entries")
    runs = tmp_path / "rollouts"
    write(runs, [result("a", outcome="fail", exit_reason="done"),
                 result("b", outcome="timeout", exit_reason="wall_time"),
                 # held out: its class matches no-match, which must stay unoffered
                 result("c", outcome="timeout", exit_reason="rollout_timeout", split="heldout")])
    with TraceStore(tmp_path / "traces.duckdb") as store:
        store.ingest_dir(runs)
        shown = offers(tmp_path / "library", store.con, "run", 0)

    assert [o.entry_id for o in shown] == ["two-classes", "best-record", "one-class-2",
                                           "one-class-1", "one-class-4"]
    assert len(shown) == OFFERED == 5


def test_an_entry_shows_what_each_trials_interval_is_over() -> None:
    """Trials filed before `interval_over` existed were read over tasks; they still say so."""
    entry = library_entry("rescue", ["fail/done"], ["keep", "keep"])
    over_pairs = Numbers(method="paired-trial", verdict="effective", effect=0.25, lo=-0.008,
                         hi=0.456, confidence=1 - 0.05 / 6, interval_over="pairs")
    filed_earlier = Numbers.model_validate(dict(method="paired-trial", verdict="effective",
                                                effect=0.17, lo=-0.1, hi=0.44, confidence=0.95))
    trials = [t.model_copy(update={"numbers": n}) for t, n in zip(entry.trials,
                                                                 [over_pairs, filed_earlier])]
    text = entry.model_copy(update={"trials": trials}).text("")
    assert "+25.0 points [-0.8, +45.6] (99.17% over pairs)" in text
    assert "+17.0 points [-10.0, +44.0] (95% over tasks)" in text
