"""benchmarks/suite.py: which tasks it measures, each task's rate and Wilson interval, the spread,
and a run through its command line (TEST DOUBLE: the scripted model solves count-lines with that
task's own solution and gives up on fix-ini-port at once), stored so that running it again, or
on another machine from the kept rollout files, runs nothing and prints the same figures."""
from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from benchmarks.suite import eval_dir, rates, select, spread
from evoharness.errors import EvoError
from evoharness.evolve.cli import app
from evoharness.evolve.loop import evolve
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.task import load_suite
from tests.fixtures.e2e_agents import action, write_script

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tasks" / "suite"


def test_select_keeps_suite_order_and_refuses_unknown_tasks():
    suite = load_suite(SUITE)
    demo = [t.id for t, _ in suite.items() if t.id in suite.demo_tasks]
    assert select(suite, "demo", None) == demo
    assert select(suite, "heldout", None) == suite.heldout
    assert select(suite, "all", ["top-ips", "count-lines"]) == ["count-lines", "top-ips"]
    with pytest.raises(EvoError, match="not in the suite"):
        select(suite, "all", ["count-lines", "no-such-task"])
    with pytest.raises(EvoError, match="unknown subset"):
        select(suite, "half", None)


def test_select_by_side_and_by_family():
    """Validation is a side of its own (never counted as train), and --family narrows any side
    to the instances of the families named; an unknown family is refused, naming the option."""
    suite = load_suite(SUITE)
    validation = select(suite, "validation", None)
    assert validation == suite.validation and not set(validation) & set(suite.train)
    train_sums = select(suite, "train", None, ["csv-sum"])
    assert train_sums and all(t.startswith("csv-sum-") and t in suite.train for t in train_sums)
    every = select(suite, "all", None, ["csv-sum", "git-branch"])
    assert len(every) == 12 and set(train_sums) < set(every)
    assert select(suite, "all", ["csv-sum-1", "count-lines"], ["csv-sum"]) == ["csv-sum-1"]
    with pytest.raises(EvoError, match="no such task family") as caught:
        select(suite, "all", None, ["csv-sum", "no-such-family"])
    assert "--family" in str(caught.value)


def test_rates_label_validation_tasks_by_their_side():
    suite = load_suite(SUITE)
    [task] = suite.validation[:1]
    [row] = rates(suite, {task: TaskCounts(passes=1, total=2)})
    assert row.split == "validation" and row.difficulty in ("one-step", "easy")


def test_each_selection_gets_its_own_directory():
    base = Path("/runs")
    assert eval_dir(base, "embedded", 4, "all", None) == base / "embedded-k4-all"
    assert eval_dir(base, "ollama:qwen2.5-coder:1.5b", 2, "demo", None).name == \
        "ollama-qwen2.5-coder-1.5b-k2-demo"
    picked = eval_dir(base, "embedded", 4, "all", ["b", "a"])
    assert picked == eval_dir(base, "embedded", 4, "all", ["a", "b"]) != \
        eval_dir(base, "embedded", 4, "all", ["a"])
    assert eval_dir(base, "embedded", 4, "all", None, "runs/night@iter-002").name == \
        "embedded-k4-all-runs-night-iter-002"
    by_family = eval_dir(base, "embedded", 4, "train", None, None, ["csv-sum"])
    assert by_family != eval_dir(base, "embedded", 4, "train", None) and \
        by_family != eval_dir(base, "embedded", 4, "train", None, None, ["git-branch"])


def test_rates_intervals_and_spread():
    suite = load_suite(SUITE)
    counts = {"count-lines": TaskCounts(passes=0, total=4),
              "fix-ini-port": TaskCounts(passes=2, total=4),
              "top-ips": TaskCounts(passes=4, total=4),
              "word-frequency": TaskCounts(passes=1, total=8)}
    rows = {r.task_id: r for r in rates(suite, counts)}
    assert rows["top-ips"].split == "heldout" and rows["count-lines"].split == "train"
    # Wilson's 95% interval for 2 of 4 is 0.5 +- 0.350 (by hand: z = 1.96, centre 0.5)
    assert rows["fix-ini-port"].lo == pytest.approx(0.150, abs=1e-3)
    assert rows["fix-ini-port"].hi == pytest.approx(0.850, abs=1e-3)
    assert rows["count-lines"].lo == 0 and rows["top-ips"].hi == pytest.approx(1.0)
    assert spread(list(rows.values())) == {"never": 1, "between": 2, "always": 1, "informative": 1}


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_the_benchmark_runs_stores_and_resumes(tmp_path):
    solve = (SUITE / "count-lines" / "solution" / "solve.sh").read_text()
    model = write_script(tmp_path / "agent.yaml", [
        {"when": {"instruction_has": ["/app/poem.txt"]},
         "replies": [action("shell", command=solve)]}])
    command = [sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--model", model,
               "--tasks", "count-lines,fix-ini-port", "-k", "2", "--keep", str(tmp_path / "kept")]

    first = subprocess.run([*command, "--dir", str(tmp_path / "bench")], capture_output=True,
                           text=True, cwd=ROOT, timeout=600)
    assert first.returncode == 0, first.stderr[-2000:]
    lines = first.stdout.splitlines()
    assert any(line.split()[:5] == ["count-lines", "train", "easy", "text-processing", "2/2"]
               for line in lines), first.stdout
    assert any(line.split()[:5] == ["fix-ini-port", "train", "easy", "config-build", "0/2"]
               for line in lines), first.stdout
    for figure in ("tasks_never_train: 1 tasks", "tasks_always_train: 1 tasks",
                   "tasks_between_train: 0 tasks", "pass_rate_all: 50.0 % (2 tasks)",
                   "tasks_without_a_scored_rollout: 0 tasks", "rollouts_pass: 2 rollouts",
                   "rollouts_fail: 2 rollouts", "rollouts_timeout: 0 rollouts",
                   "rollouts_run_now: 4 rollouts"):
        assert figure in lines, (figure, first.stdout)

    figures = [line for line in lines if not line.startswith(("rollouts_run_now", "wall_"))]
    # Again in the same directory; then in a new one (another machine) from the kept files.
    for where in ("bench", "elsewhere"):
        again = subprocess.run([*command, "--dir", str(tmp_path / where)], capture_output=True,
                               text=True, cwd=ROOT, timeout=600)
        assert again.returncode == 0, again.stderr[-2000:]
        assert "rollouts_run_now: 0 rollouts" in again.stdout.splitlines(), again.stdout
        assert figures == [line for line in again.stdout.splitlines()
                           if not line.startswith(("rollouts_run_now", "wall_"))]
    assert len(list((tmp_path / "kept").glob("*/*.json"))) == 4


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_the_benchmark_reads_a_runs_baseline_instead_of_running(tmp_path):
    """A night on the built-in suite measures it on the way: its calibrated baseline is 2k
    rollouts of the seed per task; a run on the suite copied elsewhere is read, a run on another
    suite is refused, naming the field."""
    solve = (SUITE / "count-lines" / "solution" / "solve.sh").read_text()
    model = write_script(tmp_path / "agent.yaml", [
        {"when": {"instruction_has": ["/app/poem.txt"]},
         "replies": [action("shell", command=solve)]}])
    made = CliRunner().invoke(app, ["init", str(tmp_path / "night"), "--model", model,
                                    "--subset", "count-lines,fix-ini-port,top-ips", "-k", "1",
                                    "--iterations", "0", "--exam-k", "1"])
    assert made.exit_code == 0, made.output
    evolve(tmp_path / "night", iterations=None, resume=False, say=lambda _: None)

    read = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--run",
                           str(tmp_path / "night")], capture_output=True, text=True, cwd=ROOT,
                          timeout=600)
    assert read.returncode == 0, read.stderr[-2000:]
    lines = read.stdout.splitlines()
    for task, split, counted in (("count-lines", "train", "2/2"), ("fix-ini-port", "train", "0/2"),
                                 ("top-ips", "heldout", "0/2")):
        assert any(line.split()[:2] == [task, split] and line.split()[4] == counted
                   for line in lines), (task, read.stdout)
    for figure in ("tasks_measured: 3 tasks", "rollouts_pass: 2 rollouts",
                   "rollouts_fail: 4 rollouts", "rollouts_run_now: 0 rollouts"):
        assert figure in lines, (figure, read.stdout)

    # The built-in suite in another checkout (a clone's night) is the same suite.
    copy = tmp_path / "clone-suite"
    shutil.copytree(SUITE, copy)
    assert CliRunner().invoke(app, ["init", str(tmp_path / "clone"), "--tasks", str(copy),
                                    "--model", model]).exit_code == 0
    unrun = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--run",
                            str(tmp_path / "clone")], capture_output=True, text=True, cwd=ROOT)
    assert unrun.returncode == 0, unrun.stderr[-2000:]
    unscored = f"tasks_without_a_scored_rollout: {len(load_suite(SUITE).tasks)} tasks"
    assert unscored in unrun.stdout.splitlines()

    other = ROOT / "tests" / "fixtures" / "e2e_suite"
    assert CliRunner().invoke(app, ["init", str(tmp_path / "other"), "--tasks", str(other),
                                    "--model", model]).exit_code == 0
    refused = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "suite.py"), "--run",
                              str(tmp_path / "other")], capture_output=True, text=True, cwd=ROOT)
    assert refused.returncode == 2
    assert "not a run on the built-in suite" in refused.stderr and "tasks" in refused.stderr
