"""benchmarks/remedies.py end to end on the scripted model (a TEST DOUBLE: its code agent calls done
at once, then would run the task's RUN line if done were refused): the seed baseline shows the
done_first pattern on two tasks, so done-guard is tried there and kept by its trial, its probe
run on to its cap and its effect printed at the cap and at the decision; repeat-breaker answers
nothing the baseline shows and is not tried. A second invocation on the same --dir resumes the
stored run and prints the same."""
from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

from benchmarks.remedies import effect_lines
from evoharness.evolve.library.entry import Numbers
from evoharness.evolve.run import read_run
from tests.fixtures.e2e_agents import solve_rule, write_script
from tests.fixtures.suites import write_suite

ROOT = Path(__file__).resolve().parents[2]


def bench(*args: str) -> str:
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "remedies.py"), *args],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_an_entry_cued_by_the_baseline_is_tried_against_the_seed_and_reported(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", ["alpha", "beta", "gamma"], ["omega"])
    early_done = [{"tool": "done", "arguments": {"summary": "early"}}, {"run_line": True}]
    model = write_script(tmp_path / "model.yaml", [
        *({"when": {"instruction_has": [word]}, "replies": early_done} for word in ("alpha", "beta")),
        solve_rule()])  # write-gamma: always passes, so the screen guards it
    args = ["--dir", str(tmp_path / "run"), "--tasks", str(suite), "--model", model, "-k", "1",
            "--entries", "done-guard,repeat-breaker", "--trial-rollouts", "24"]
    out = bench(*args)
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    # the probe ran on to its cap of 24 rollouts: 12 pairs, each a win
    assert re.fullmatch(r"\+100\.0 \[\+[0-9.]+, \+100\.0\] points \(95% over 12 pairs, "
                        r"fixed size: the probe run to its cap; 12 wins, 0 losses\)",
                        lines["effect_done-guard"])
    assert re.fullmatch(r"\+100\.0 \[\+[0-9.]+, \+100\.0\] points \([0-9.]+% over pairs, "
                        r"at every look\)", lines["effect_at_decision_done-guard"])
    assert lines["decision_done-guard"].startswith("keep (effective; p = ")
    assert re.search(r"; p = [0-9.e-]+; [1-9][0-9]* wins?, 0 losses in its pairs; "
                     r"tasks: write-alpha, write-beta\)$", lines["decision_done-guard"])
    assert lines["reason_done-guard"].startswith("gain shown: ")
    assert lines["decision_repeat-breaker"] == "untried"
    assert lines["effect_repeat-breaker"].startswith("n/a (no train task showed pattern:")
    assert lines["baseline_pass_rate"] == "33.3 % (3 rollouts)"
    assert bench(*args).splitlines()[:6] == out.splitlines()[:6]  # resumed: nothing re-run
    ledger = read_run(tmp_path / "run")[1]
    with ledger.reading() as store:
        probed = store.con.execute("SELECT count(*) FROM rollouts WHERE trial_change <> '' AND "
                                   "task_id IN ('write-alpha', 'write-beta')").fetchone()[0]
    (judgement,) = ledger.judgements().values()
    assert probed == 24 > judgement.verdict.rollouts.base + judgement.verdict.rollouts.change


def test_read_at_the_decision_the_probe_stops_and_a_new_run_id_needs_a_new_dir(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", ["alpha"], ["omega"])
    model = write_script(tmp_path / "model.yaml", [
        {"when": {"instruction_has": ["alpha"]},
         "replies": [{"tool": "done", "arguments": {"summary": "early"}}, {"run_line": True}]}])
    args = ["--dir", str(tmp_path / "run"), "--tasks", str(suite), "--model", model, "-k", "1",
            "--entries", "done-guard", "--trial-rollouts", "24"]
    out = bench(*args, "--stop-at-decision")
    lines = dict(line.split(": ", 1) for line in out.splitlines())
    assert "over pairs, at every look)" in lines["effect_done-guard"]
    assert "effect_at_decision_done-guard" not in lines
    with read_run(tmp_path / "run")[1].reading() as store:
        probed = store.con.execute("SELECT count(*) FROM rollouts WHERE trial_change <> ''"
                                   ).fetchone()[0]
    assert probed == int(lines["rollouts_done-guard"].split()[0]) < 24
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "remedies.py"), *args,
                           "--run-id", "fresh"], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "holds run remedies; resume it with --run-id remedies" in (
        done.stderr)


def test_an_unknown_task_entry_or_unsafe_run_id_is_refused_before_any_rollout(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", ["alpha"], ["omega"])
    for option, value, said in [
            ("--task-ids", "write-alpha,write-zeta", "no train task write-zeta"),
            ("--entries", "done-guard,done-gaurd", "no starter entry done-gaurd"),
            ("--run-id", "../evil", "run_id: use letters, digits")]:
        done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "remedies.py"), "--dir",
                               str(tmp_path / "run"), "--tasks", str(suite), option, value],
                              capture_output=True, text=True, cwd=ROOT)
        assert done.returncode != 0 and said in done.stderr
        assert not (tmp_path / "run" / "run.yaml").exists()


def test_each_reading_of_the_effect_says_what_it_is_over() -> None:
    untestable = Numbers(method="paired trial", verdict="untestable", reason="predicts no fix")
    assert effect_lines("e", untestable, [], 0.95) == ["effect_e: n/a (no probe: predicts no fix)"]
    assert effect_lines("e", untestable, None, 0.95) == ["effect_e: n/a"]
    stopped = Numbers(method="paired trial", verdict="effective", effect=0.5, lo=0.1, hi=0.8,
                      confidence=1 - 0.05 / 6, interval_over="pairs")
    at_cap, at_decision = effect_lines("e", stopped, [(False, True), (False, False)] * 6, 0.95)
    assert re.fullmatch(r"effect_e: \+50\.0 \[\+[0-9.]+, \+[0-9.]+\] points \(95% over 12 pairs, "
                        r"fixed size: the probe run to its cap; 6 wins, 0 losses\)", at_cap)
    assert at_decision == ("effect_at_decision_e: +50.0 [+10.0, +80.0] points "
                           "(99.17% over pairs, at every look)")


def test_a_series_fixes_each_trials_level_before_the_first_and_refuses_one_past_its_family(
        tmp_path: Path) -> None:
    from evoharness.manifests.series import SeriesRecord

    suite = write_suite(tmp_path / "suite", ["alpha"], ["omega"])
    model = write_script(tmp_path / "model.yaml", [
        {"when": {"instruction_has": ["alpha"]},
         "replies": [{"tool": "done", "arguments": {"summary": "early"}}, {"run_line": True}]}])
    series = tmp_path / "rescue-series.json"
    common = ["--tasks", str(suite), "--model", model, "-k", "1", "--entries", "done-guard",
              "--trial-rollouts", "24", "--stop-at-decision", "--series", str(series)]
    first = bench("--dir", str(tmp_path / "one"), "--run-id", "one", *common, "--register", "2",
                  "--family-alpha", "0.05", "--spending", "halving")
    record = SeriesRecord.model_validate_json(series.read_text())
    assert record.plan.levels == [0.025, 0.025] and record.plan.size == 2
    assert "series_trial: 1 of 2 at level 0.025 (family-wise alpha 0.05" in first
    assert read_run(tmp_path / "one")[0].verdicts.alpha == 0.025  # the trial ran at its level
    bench("--dir", str(tmp_path / "two"), "--run-id", "two", *common)
    record = SeriesRecord.model_validate_json(series.read_text())
    assert [(t.index, t.run_id, t.level) for t in record.trials] == [(0, "one", 0.025),
                                                                      (1, "two", 0.025)]
    decision, p = record.trials[1].results["done-guard"]
    assert decision == "keep" and p <= 0.025
    done = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "remedies.py"), "--dir",
                           str(tmp_path / "three"), "--run-id", "three", *common],
                          capture_output=True, text=True, cwd=ROOT)
    assert done.returncode != 0 and "the series is spent" in done.stderr
    assert not (tmp_path / "three").exists()
