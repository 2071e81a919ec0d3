"""The commands that drive a run (evolve/cli/run.py) through the CLI: the README's main job
(`init --subset demo`, then `evolve`), `evoharness run` on the happy path, and
`--unsafe-no-sandbox` from init through evolve on a machine without bubblewrap."""
from __future__ import annotations

import os
import re
import shlex
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoharness.evolve.cli import app
from evoharness.evolve.ledger import EVALUATE, PHASE_ORDER
from evoharness.evolve.run import read_run
from tests.fixtures.e2e_agents import (
    HELPFUL_RULE, NOTHING_JUDGED, action, agents, change, done, evolve_rule, solve_rule,
    write_script,
)

ROOT = Path(__file__).resolve().parents[2]
SUITE = ROOT / "tests" / "fixtures" / "e2e_suite"
EVOHARNESS = str(Path(sys.executable).parent / "evoharness")
# Hang guards only: the scripted model answers at once, so the work is a fixed number of
# sandboxed rollouts (the demo: 100, 43 s on a quiet 2-core machine), which a loaded machine
# stretches several-fold. A command past its guard fails with what it printed so far.
COMMAND_SECONDS = 1500
TEST_SECONDS = 1800


def evoharness(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess:
    """The installed command, as the README runs it."""
    return subprocess.run([EVOHARNESS, *args], capture_output=True, text=True, cwd=ROOT,
                          env={**os.environ, "COLUMNS": "200", **(env or {})},
                          timeout=COMMAND_SECONDS)


def stored_rollouts(run_dir: Path) -> dict[int, dict[str, str]]:
    """Outcome of every stored evaluation rollout (not a change's trial), by iteration and id."""
    found: dict[int, dict[str, str]] = {}
    with read_run(run_dir)[1].reading() as store:
        rows = store.con.execute("SELECT iteration, rollout_id, outcome FROM rollouts "
                                 "WHERE trial_change = ''").fetchall()
    for iteration, rollout, outcome in rows:
        found.setdefault(iteration, {})[rollout] = outcome
    return found


def readme_main_job(run_dir: Path) -> list[list[str]]:
    """The evoharness commands of README's main job (`./install.sh && ... init runs/demo ... &&
    ... evolve runs/demo`, wrapped with backslashes as a shell reads it), on `run_dir` instead of
    runs/demo."""
    readme = re.sub(r"\\\n\s*", "", (ROOT / "README.md").read_text())
    [line] = [line for line in readme.splitlines()
              if line.startswith("    ./install.sh && ") and " evolve runs/demo" in line]
    _, *commands = line.strip().split(" && ")
    return [[str(run_dir) if word == "runs/demo" else word for word in shlex.split(command)[1:]]
            for command in commands]


@pytest.mark.slow  # a full demo: 42 evaluation, 18 exam and a trial's rollouts
@pytest.mark.timeout(TEST_SECONDS)
def test_the_readmes_main_job_runs_through_the_cli(tmp_path: Path) -> None:
    """README "On a fresh machine", its commands as the README has them (`init runs/demo --subset
    demo ...`, then `evolve runs/demo`), with one change: `--model` names a scripted model. The
    README's run uses the real embedded model, which took 57 minutes on 2 cores, too slow for CI;
    the scripted model is a test double that plays both agents, so this checks the commands, the
    suite's demo tasks and the loop, not what a model achieves. The evolve agent's rule lets the
    code agent run count-lines' own solution; every other demo task (and every held-out one) it
    gives up on at once, so the final exam finds no difference."""
    solve = (ROOT / "tasks/suite/count-lines/solution/solve.sh").read_text()
    model = write_script(tmp_path / "agents.yaml", [
        evolve_rule([change(HELPFUL_RULE, ["count-lines"]), done()], also_has=[NOTHING_JUDGED]),
        solve_rule(has=[HELPFUL_RULE], instruction_has=["/app/poem.txt"],
                   first=action("shell", command=solve)),
    ])
    run_dir = tmp_path / "runs" / "demo"
    init, evolve = readme_main_job(run_dir)

    made = evoharness(*init, "--model", model)
    assert made.returncode == 0, made.stderr
    evolved = evoharness(*evolve)

    assert evolved.returncode == 0, evolved.stderr[-3000:]
    assert "finished after iteration 1 (1 iteration(s) done)" in evolved.stdout
    assert "iter  train  held-out" in evolved.stdout  # the status table it prints at the end
    outcomes = stored_rollouts(run_dir)
    # 4 demo and 3 held-out tasks, k=2: 28 for the calibrated baseline, 14 after the change
    assert [len(outcomes[i]) for i in (0, 1)] == [28, 14]
    passed = {i: sorted(r for r, o in rows.items() if o == "pass") for i, rows in outcomes.items()}
    assert passed == {0: [], 1: ["it001-count-lines-a00", "it001-count-lines-a01"]}
    _, ledger = read_run(run_dir)
    assert [(r.iteration, r.decision) for r in ledger.changes()] == [(0, "keep")]
    assert ledger.phases_done(0) == set(PHASE_ORDER) and ledger.phases_done(1) == set(EVALUATE)
    # The README's last line of the demo: the exam, seed (twice) and final on the held-out tasks
    assert ("exam on 3 held-out tasks, k=2: final vs seed: no difference shown: +0.0 points"
            in evolved.stdout and "(noise floor, seed vs seed: " in evolved.stdout)
    [exam] = ledger.exams()
    assert exam.k == 2
    assert sorted(exam.tasks) == ["json-extract-version", "merge-env-files", "top-ips"]
    assert len(list((run_dir / "exams" / exam.exam_id / "rollouts").glob("*.json"))) == 18
    shown = evoharness("manifest", "show", str(run_dir))
    assert shown.returncode == 0 and "count-lines" in shown.stdout


def test_run_evaluates_the_harness_once_and_says_so_when_asked_again(tmp_path: Path) -> None:
    model = agents(tmp_path / "agents.yaml", [change(HELPFUL_RULE, ["write-alpha"]), done()],
                   solves_with=[HELPFUL_RULE])
    run_dir = tmp_path / "run"
    runner = CliRunner()
    made = runner.invoke(app, ["init", str(run_dir), "--tasks", str(SUITE), "--model", model,
                               "-k", "1"])
    assert made.exit_code == 0, made.output

    first = runner.invoke(app, ["run", str(run_dir)])  # 80 columns, as in a pipe

    assert first.exit_code == 0, first.output
    rollout_lines = [line for line in first.output.splitlines() if "it000-write-" in line]
    assert len(rollout_lines) == 6  # one line each, the exit reason last: never wrapped
    assert all(re.search(r" \d+ steps +[\d.]+s  done$", line) for line in rollout_lines)
    assert "iteration 0: DISTILL" in first.output and "iter  train  held-out" in first.output
    _, ledger = read_run(run_dir)
    assert ledger.phases_done(0) == set(EVALUATE)  # evaluated, nothing evolved
    assert len(stored_rollouts(run_dir)[0]) == 6  # 3 tasks, k=1, calibrated: twice
    assert (run_dir / "iterations/it000/evidence/overview.md").is_file()
    assert not (run_dir / "iterations/it000/evolve_trace.json").exists()

    again = runner.invoke(app, ["run", str(run_dir)])

    assert again.exit_code == 0, again.output
    assert "iteration 0 is already evaluated; `evoharness evolve` continues it" in again.output
    assert len(stored_rollouts(run_dir)[0]) == 6  # nothing run twice
    evolved = runner.invoke(app, ["evolve", str(run_dir), "--iterations", "1"])
    assert evolved.exit_code == 0, evolved.output
    assert [(r.iteration, r.decision) for r in read_run(run_dir)[1].changes()] == [(0, "keep")]


def test_without_bubblewrap_a_run_needs_the_unsafe_flag_and_then_warns(
        tmp_path: Path, path_without_bwrap: str) -> None:
    model = agents(tmp_path / "agents.yaml", [change(HELPFUL_RULE, ["write-alpha"]), done()])
    no_bwrap = {"PATH": path_without_bwrap}
    common = ["--tasks", str(SUITE), "--model", model, "-k", "1", "--iterations", "1"]

    assert evoharness("init", str(tmp_path / "safe"), *common, env=no_bwrap).returncode == 0
    refused = evoharness("evolve", str(tmp_path / "safe"), env=no_bwrap)
    assert refused.returncode == 2
    assert "bubblewrap (bwrap) is not installed" in refused.stderr
    assert "--unsafe-no-sandbox" in refused.stderr
    assert stored_rollouts(tmp_path / "safe") == {}

    run_dir = tmp_path / "unsafe"
    made = evoharness("init", str(run_dir), *common, "--unsafe-no-sandbox", env=no_bwrap)
    assert made.returncode == 0, made.stderr
    evolved = evoharness("evolve", str(run_dir), env=no_bwrap)

    assert evolved.returncode == 0, evolved.stderr[-3000:]
    assert "WARNING: --unsafe-no-sandbox" in evolved.stderr
    assert "finished after iteration 1" in evolved.stdout
    outcomes = stored_rollouts(run_dir)
    # The scripted agent runs each task's RUN line on the host: every rollout passes, so the
    # change is reverted and the limit does not evaluate the seed again.
    assert len(outcomes[0]) == 6 and 1 not in outcomes
    assert {o for rows in outcomes.values() for o in rows.values()} == {"pass"}
