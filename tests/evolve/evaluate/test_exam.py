"""The final exam (evolve/evaluate/exam.py) end to end on the scripted model (a TEST DOUBLE: its outcomes
are decided by the harness's prompt, tests/fixtures/e2e_agents.py): a harness with a known-good
rule is found better on the held-out tasks with an interval above zero, a placebo harness is not,
both beside the seed-against-seed noise floor, and a killed exam resumes without running a stored
rollout again. The scripted model is deterministic, so the seed's two runs agree exactly and the
noise floor's interval is the rollouts' binomial floor alone."""
from __future__ import annotations

import json
import os
import re
from html import escape as html_escape
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoharness.errors import EvoError
from evoharness.evolve.cli import app
from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.evaluate.evaluation import EvalDir
from evoharness.evolve.report.build import render_report
from evoharness.evolve.report.data import collect
from evoharness.evolve.loop import evaluate_once, evolve
from evoharness.evolve.run import init_run, open_run, read_run
from evoharness.tasks.results import RolloutResult
from tests.fixtures import hiding
from tests.fixtures.e2e_agents import (
    HELPFUL_RULE, agents, change, done, solve_rule, wait, write_script,
)
from tests.fixtures.suites import write_suite
from evoharness.traces.sql_tool import SqlTool
from evoharness.workspace.edits import apply_edits, parse_edits
from evoharness.workspace.repo import SEED_DIR

TRAIN = ["alpha", "beta"]
HELDOUT = ["gamma", "delta", "epsilon", "zeta"]
EXAM_K = 2
EVOHARNESS = Path(sys.executable).parent / "evoharness"


def make_run(tmp_path: Path, model: str, **options) -> Path:
    suite = write_suite(tmp_path / "suite", TRAIN, HELDOUT)
    config = RunConfig(**{"run_id": "exam", "tasks": suite, "model": model, "k": 1,
                          "workers": 2, "rollout_timeout": 60, "calibration": False,
                          "exam": {"k": EXAM_K}, "stop": StopRules(iterations=1), **options})
    return init_run(tmp_path / "run", config).root


def commit_edit(run_dir: Path, edit: dict) -> None:
    """A change made by hand on top of the evaluated seed: the exam's final harness."""
    with open_run(run_dir, command="test") as run:
        apply_edits(run.repo, parse_edits([edit]))
        run.repo.commit_change("by hand", change_id="hand-1", component="system_prompt")


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow
def test_a_kept_known_good_rule_is_better_on_the_held_out_tasks(tmp_path: Path) -> None:
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, ["write-alpha", "write-beta"]),
                                         done()], solves_with=[HELPFUL_RULE])
    run_dir = make_run(tmp_path, model)

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None, examine=True)

    _, ledger = read_run(run_dir)
    [exam] = ledger.exams()
    assert result.exam_id == exam.exam_id
    [final] = exam.comparisons  # best (iteration 1) is the final harness: compared once
    assert (final.a, final.b, final.n) == ("seed", "final", len(HELDOUT))
    assert final.verdict == "better" and final.lo > 0 and final.mean == 1.0
    assert all((p.a.passes, p.a.total, p.b.passes) == (0, 2 * EXAM_K, EXAM_K)
               for p in final.tasks)  # the seed's two runs pooled
    floor = exam.noise_floor
    assert floor.verdict == "no difference shown" and floor.mean == 0.0 and floor.lo < 0 < floor.hi
    assert exam.verdict_line().startswith(f"exam on {len(HELDOUT)} held-out tasks, k={EXAM_K}: "
                                          "final vs seed: better by +100.0 points [")
    # Shown by status and manifest show, indexed in the run's store...
    assert json.loads(cli("status", str(run_dir), "--json"))["exam"]["verdict"] == \
        exam.verdict_line()
    shown = cli("manifest", "show", str(run_dir))
    assert "final vs seed: better by +100.0 points" in shown and "noise floor" in shown
    with ledger.reading() as store:
        assert store.con.execute("SELECT exam_id, verdict FROM exams").fetchall() == \
            [(exam.exam_id, exam.verdict_line())]
        # ...while its rollouts stay in the exam's own store: besides the change's trial (train
        # tasks only), the loop's store holds its two evaluations and nothing else.
        in_run = dict(store.con.execute(
            "SELECT split, count(*) FROM rollouts WHERE trial_change = '' GROUP BY split"
        ).fetchall())
    assert in_run == {"train": 2 * len(TRAIN), "heldout": 2 * len(HELDOUT)}  # its. 0, 1; k = 1
    with SqlTool(run_dir / "traces.duckdb", restrict_to_split="train") as view:
        with pytest.raises(EvoError):  # the evolve agent's view has no exams table
            view.run("SELECT * FROM exams")
    exam_dir = EvalDir(run_dir / "exams" / exam.exam_id)
    assert len(list(exam_dir.rollouts.glob("*.json"))) == 3 * len(HELDOUT) * EXAM_K
    html = render_report(collect(run_dir))  # the report: verdict, per-task table, interval plot
    assert html_escape(exam.verdict_line()) in html and 'id="exam-tasks"' in html
    assert 'id="fig-comparisons" data-points="2"' in html  # the noise floor and final vs seed


@pytest.mark.slow
def test_a_placebo_harness_shows_no_difference(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, agents(tmp_path / "s.yaml", [], solves_with=[HELPFUL_RULE]))
    evaluate_once(run_dir, lambda _: None)
    seed = (SEED_DIR / "harness.yaml").read_text()
    commit_edit(run_dir, {"op": "write_file", "path": "harness.yaml",
                          "content": seed + "# the agent should check its work\n"})

    shown = cli("exam", str(run_dir))

    [exam] = read_run(run_dir)[1].exams()
    [final] = exam.comparisons
    assert final.verdict == "no difference shown" and final.lo < 0 < final.hi
    assert exam.noise_floor.verdict == "no difference shown"
    assert "final vs seed: no difference shown: +0.0 points [" in shown
    assert "noise floor (seed vs seed again): no difference shown" in shown
    for task in HELDOUT:
        assert f"write-{task}" in shown  # the per-task table
    assert cli("exam", str(run_dir)).count("no difference shown") == shown.count(
        "no difference shown")  # a finished exam is shown again, not run again
    assert len(read_run(run_dir)[1].exams()) == 1


@pytest.mark.slow
def test_a_killed_exam_resumes_without_running_a_stored_rollout_again(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    holding = [solve_rule(has=[HELPFUL_RULE], instruction_has=["gamma"],
                          first=wait({"run_line": True})), solve_rule(has=[HELPFUL_RULE])]
    run_dir = make_run(tmp_path, write_script(script, holding))
    evaluate_once(run_dir, lambda _: None)
    commit_edit(run_dir, {"op": "append_rule", "text": HELPFUL_RULE})
    log = (tmp_path / "exam.log").open("w")
    proc = subprocess.Popen([str(EVOHARNESS), "exam", str(run_dir)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    seeds = 2 * len(HELDOUT) * EXAM_K  # the seed's two runs come first, then the final's

    def files() -> dict[str, float]:
        return {p.name: p.stat().st_mtime_ns
                for p in (run_dir / "exams").glob("*/rollouts/*.json")}

    deadline = time.monotonic() + 120  # a safety net; the kill point is a state of the files
    while len(files()) <= seeds:
        assert proc.poll() is None and time.monotonic() < deadline, "no kill point"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    before = files()
    write_script(script, [solve_rule(has=[HELPFUL_RULE])])  # the held rollouts now finish

    shown = cli("exam", str(run_dir))

    after = files()
    assert len(after) == 3 * len(HELDOUT) * EXAM_K
    assert {name: after[name] for name in before} == before  # none written again
    assert shown.count(" pass ") + shown.count(" fail ") == len(after) - len(before)
    [exam] = read_run(run_dir)[1].exams()
    assert exam.comparisons[0].verdict == "better"


@pytest.mark.slow
def test_with_no_change_kept_the_exam_says_the_final_harness_is_the_seed(tmp_path: Path) -> None:
    """As in the README demo, whose sessions made no change: only the noise floor is measured."""
    run_dir = make_run(tmp_path, agents(tmp_path / "s.yaml", [], solves_with=[HELPFUL_RULE]))
    evaluate_once(run_dir, lambda _: None)

    shown = " ".join(cli("exam", str(run_dir)).split())

    [exam] = read_run(run_dir)[1].exams()
    assert exam.comparisons == [] and exam.note == "the final harness is the seed (no change was kept)"
    assert exam.note in shown and "noise floor (seed vs seed again): no difference shown" in shown


def test_the_exam_takes_the_seeds_held_out_rollouts_from_iteration_0_and_runs_none_again(
        tmp_path: Path) -> None:
    """With calibration, iteration 0 ran the seed k x 2 times on every held-out task: the exam's
    seed and seed-again arms at k = 2 x 1 are all there, relabelled, so the exam runs nothing."""
    run_dir = make_run(tmp_path, agents(tmp_path / "s.yaml", [], solves_with=[HELPFUL_RULE]),
                       calibration=True, exam={"k": 1})
    evaluate_once(run_dir, lambda _: None)
    loop = {(r.task_id, r.attempt): r for r in
            map(_result, (run_dir / "iterations/it000/rollouts").glob("*.json"))
            if r.split == "heldout"}

    shown = " ".join(cli("exam", str(run_dir)).split())

    [exam] = read_run(run_dir)[1].exams()
    assert exam.reused_rollouts == 2 * len(HELDOUT) and f"{2 * len(HELDOUT)} of the seed's" in shown
    assert shown.count(" pass ") + shown.count(" fail ") == 0  # no rollout ran
    stored = [_result(p) for p in (run_dir / "exams" / exam.exam_id / "rollouts").glob("*.json")]
    assert sorted((r.iteration, r.task_id, r.attempt) for r in stored) == sorted(
        (arm, task, 0) for arm in (0, 1) for task in {task for task, _ in loop})
    for r in stored:  # the seed arm holds attempt 0 of the loop, the seed again attempt 1
        assert (r.run_id, r.outcome, r.events) == (exam.exam_id, loop[r.task_id, r.iteration].outcome,
                                                   loop[r.task_id, r.iteration].events)
    assert exam.noise_floor.n == len(HELDOUT)


def _result(path: Path) -> RolloutResult:
    return RolloutResult.model_validate_json(path.read_bytes())


@pytest.mark.slow
def test_a_final_harness_that_hides_its_failures_as_infra_errors_is_worse(tmp_path: Path,
                                                                         monkeypatch) -> None:
    """The final harness fails gamma and delta as the seed does, but as infra errors
    (tests/fixtures/hiding.py): its scored rollouts all pass, and the exam still calls it worse,
    showing each harness's infra errors."""
    hiding.patch(monkeypatch)
    run_dir = make_run(tmp_path, write_script(tmp_path / "s.yaml", [
        solve_rule(instruction_has=[word]) for word in ("alpha", "beta", "epsilon", "zeta")]))
    evaluate_once(run_dir, lambda _: None)
    commit_edit(run_dir, {"op": "write_file", "path": "memory/LONG_TERM.md",
                          "content": f"{hiding.HIDES}\n"})

    shown = cli("exam", str(run_dir))

    [exam] = read_run(run_dir)[1].exams()
    [final] = exam.comparisons
    assert final.verdict == "worse" and final.infra_rose and final.mean >= 0
    assert (str(final.a_infra), str(final.b_infra)) == ("0/16", "4/8")
    assert "final vs seed: worse: more infra errors (4/8 against 0/16)" in shown
    assert re.search(r"infra errors\s*│\s*0/8\s*│\s*0/8\s*│\s*4/8", shown), shown


@pytest.mark.slow
def test_the_best_iteration_is_examined_beside_a_final_harness_that_lost_its_gain(tmp_path):
    """The loop keeps the helpful rule (iteration 1 passes every train task), then a hand edit
    takes it out again: final is no longer best. Both are compared with the seed beside its
    noise floor, each interval at the Bonferroni level (1 - 0.05 / 2 = 97.5% for two)."""
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, ["write-alpha", "write-beta"]),
                                         done()], solves_with=[HELPFUL_RULE])
    run_dir = make_run(tmp_path, model, exam={"k": EXAM_K, "on_stop": False})
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    prompt = (SEED_DIR / "system_prompt.md.j2").read_text()
    commit_edit(run_dir, {"op": "write_file", "path": "system_prompt.md.j2",
                          "content": prompt + "\nCheck your work.\n"})

    shown = " ".join(cli("exam", str(run_dir)).split())

    [exam] = read_run(run_dir)[1].exams()
    arms = {a.name: a for a in exam.arms}
    assert arms["best"].iteration == 1 and arms["best"].tree != arms["final"].tree
    by_arm = {c.b: c for c in exam.comparisons}
    final, best = by_arm["final"], by_arm["best"]
    assert final.a == best.a == "seed"
    assert final.verdict == "no difference shown" and final.mean == 0.0
    assert best.verdict == "better" and best.lo > 0 and best.mean == 1.0
    # Each comparison with the seed (two here: 97.5%) and the noise floor at the family's level.
    level = 1 - (1 - exam.confidence) / len(exam.comparisons)
    assert exam.confidence == 0.95 and len(exam.comparisons) >= 2
    assert {c.confidence for c in [*exam.comparisons, exam.noise_floor]} == {level}
    assert "best (iteration 1) vs seed: better by +100.0 points [" in shown
    assert f"({level:.1%} interval, 4 tasks)" in shown
