"""The exam's matched-budget baseline (evolve/evaluate/best_of.py, evolve/evaluate/picker.py) through the CLI, on
the scripted model (a TEST DOUBLE, tests/fixtures/e2e_agents.py): the code agent's outcome is
set by the harness it sees and by which attempt it is (`rollout_matches`), and the picker is
scripted to read the attempts (`quote`: the number of an attempt that left a file), so every
outcome below is fixed, not drawn. Best-of-N wins where the seed solves one attempt in N and the
final harness is a placebo; it does not where the seed never solves and the final harness does.
The picker's prompts are stored with each pick: they hold what the attempts left and nothing of
a verifier (whose output here carries a marker) or of /tests."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoharness.evolve.evaluate.best_of import Pick
from evoharness.evolve.cli import app
from evoharness.evolve.ledger.records import EvolutionCost
from evoharness.evolve.loop import evaluate_once
from evoharness.evolve.run import read_run
from evoharness.tasks.results import RolloutResult
from tests.evolve.evaluate.test_exam import EVOHARNESS, cli, commit_edit, make_run
from tests.fixtures.e2e_agents import EVOLVE_MARKER, FOREVER, HELPFUL_RULE, write_script
from tests.fixtures.suites import write_suite
from evoharness.workspace.repo import SEED_DIR

PICKER = "You judge attempts at a task"
HELDOUT = ["gamma", "delta", "epsilon", "zeta"]
VERIFIER_MARKER = "VERIFIER-SAID-THIS"
TESTS_TEXT = "Plain shell check, fast"  # a line of every task's tests/test.sh
# The number of an attempt whose files list is not empty (an attempt that wrote its word).
WROTE_A_FILE = r'"attempt": (\d+),[^{}]*"files": \[\s*\{'


def picker(wait_on: str | None = None) -> list[dict]:
    """The picker's rules: the first attempt that left a file; with `wait_on`, it holds there
    on the task whose instruction names that file (a kill point)."""
    reply = {"quote": WROTE_A_FILE}
    held = [{"when": {"system_has": [PICKER], "instruction_has": [wait_on]},
             "replies": [{**reply, "wait_s": FOREVER}]}] if wait_on else []
    return held + [{"when": {"system_has": [PICKER]}, "replies": [reply]}]


def code_agent(**when) -> dict:
    """The code agent runs the RUN line when `when` holds (never for the evolve agent)."""
    return {"when": {"system_lacks": [EVOLVE_MARKER, PICKER], **when},
            "replies": [{"run_line": True}]}


def mark_verifiers(suite: Path) -> Path:
    """Each verifier of `suite` prints VERIFIER_MARKER: if any of its output reached the picker,
    the marker would be in a prompt."""
    for test in suite.glob("*/tests/test.sh"):
        test.write_text(test.read_text() + f"echo {VERIFIER_MARKER}\n")
    return suite


def marked_run(tmp_path: Path, model: str, **options) -> Path:
    """test_exam's run (train alpha, beta; k=1, no calibration), its verifiers marked."""
    run_dir = make_run(tmp_path, model, **options)
    mark_verifiers(tmp_path / "suite")
    return run_dir


def placebo(run_dir: Path) -> None:
    seed = (SEED_DIR / "harness.yaml").read_text()
    commit_edit(run_dir, {"op": "write_file", "path": "harness.yaml",
                          "content": seed + "# the agent should check its work\n"})


def stored_picks(run_dir: Path) -> dict[str, Pick]:
    return {p.name: Pick.model_validate_json(p.read_text())
            for p in sorted((run_dir / "exams").glob("*/picks/*.json"))}


def by_pair(record: dict) -> dict[tuple[str, str], dict]:
    return {(c["a"], c["b"]): c for c in record["comparisons"]}


@pytest.mark.slow
def test_best_of_n_wins_when_the_seed_solves_one_attempt_in_n(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    # Of each pick's 6 attempts (a00-a05, a06-a11) the seed solves the last; the exam's other
    # arms run attempts a00 and a01 only, so the seed's and the placebo's runs never solve.
    model = write_script(script, picker() + [code_agent(rollout_matches=r"-a(05|11)$")])
    run_dir = marked_run(tmp_path, model)
    evaluate_once(run_dir, lambda _: None)
    placebo(run_dir)

    shown = " ".join(cli("exam", str(run_dir), "--exam-baseline", "best-of:6").split())

    [exam] = read_run(run_dir)[1].exams()
    pairs = {(c.a, c.b): c for c in exam.comparisons}
    assert list(pairs) == [("seed", "final"), ("best-of-6", "final"), ("seed", "best-of-6")]
    assert all(c.confidence == pytest.approx(1 - 0.05 / 3) for c in pairs.values())
    won = pairs["seed", "best-of-6"]
    assert won.verdict == "better" and won.mean == 1.0
    assert all((p.b.passes, p.b.total) == (2, 2) for p in won.tasks)  # 2 picks per task, k=2
    lost = pairs["best-of-6", "final"]
    assert lost.verdict == "worse" and lost.mean == -1.0
    assert pairs["seed", "final"].verdict == "no difference shown"
    assert exam.verdict_line().startswith(
        f"exam on {len(HELDOUT)} held-out tasks, k=2: final vs seed: no difference shown: +0.0 "
        "points [")
    assert "final vs seed best-of-6: worse by -100.0 points [" in exam.verdict_line()
    assert "seed best-of-6 vs seed: better by +100.0 points [" in shown
    # 6 attempts meet as groups of 4 and 2, then the two winners: 3 calls per pick, one of them
    # on a group where no attempt wrote its file (the reply names none: the first shown counts).
    base = exam.baseline
    assert (base.n, base.n_from, base.picks) == (6, "given", 2)
    assert (base.rollouts, base.picker_calls, base.fallbacks) == (48, 24, 8)
    assert "2 picks per task, each the model's choice among 6 fresh attempts (N as given)" in shown
    assert exam.cost is not None and exam.cost.rollouts == 6 and "the evolution spent 6 " \
        "rollouts" in exam.verdict_line()

    picks = stored_picks(run_dir)
    assert len(picks) == len(HELDOUT) * 2
    rollouts = next((run_dir / "exams").glob("*/rollouts"))
    for pick in picks.values():
        assert pick.chosen.endswith(("-a05", "-a11")) and len(pick.calls) == 3
        result = RolloutResult.model_validate_json((rollouts / f"{pick.chosen}.json").read_text())
        assert result.outcome == "pass" and VERIFIER_MARKER in result.verifier_tail
        assert [f.path for f in result.left.files] == [f"{pick.task_id.split('-')[1]}.txt"]
        for call in pick.calls:  # what the picker read: the attempts' leavings, no verdict
            assert VERIFIER_MARKER not in call.prompt and TESTS_TEXT not in call.prompt
            assert '"pass"' not in call.prompt and "reward" not in call.prompt


@pytest.mark.slow
def test_with_nothing_kept_the_answer_still_says_what_best_of_n_did(tmp_path: Path) -> None:
    """The recorded night kept no change: its answer said only that the final harness is the
    seed, and left out the baseline's comparison the exam had measured."""
    script = tmp_path / "s.yaml"
    model = write_script(script, picker() + [code_agent(rollout_matches=r"-a(05|11)$")])
    run_dir = marked_run(tmp_path, model)
    evaluate_once(run_dir, lambda _: None)  # no change: the final harness is the seed

    cli("exam", str(run_dir), "--exam-baseline", "best-of:6")

    [exam] = read_run(run_dir)[1].exams()
    assert [(c.a, c.b) for c in exam.comparisons] == [("seed", "best-of-6")]
    assert exam.answer()[:2] == ["the final harness is the seed (no change was kept)",
                                 "seed best-of-6 vs seed: " + exam.comparisons[0].sentence()]
    assert "better by +100.0 points" in exam.answer()[1]
    assert exam.verdict_line().startswith(
        f"exam on {len(HELDOUT)} held-out tasks, k=2: the final harness is the seed (no change "
        "was kept); seed best-of-6 vs seed: better by +100.0 points [")
    shown = cli("status", str(run_dir)).splitlines()
    assert shown[2].strip().startswith("seed best-of-6 vs seed: better by +100.0 points")


@pytest.mark.slow
def test_best_of_n_samples_its_attempts_at_each_temperature_in_turn(tmp_path: Path) -> None:
    """`--exam-temperatures 0.1,0.9`: the baseline's attempts alternate between the two (each
    of their model calls records the one it was sampled at), so each pick chooses among both;
    the seed's arms keep the harness's own 0.2; the record and its sentence say so."""
    model = write_script(tmp_path / "s.yaml", picker() + [code_agent(rollout_matches=r"-a0[13]$")])
    run_dir = marked_run(tmp_path, model)
    evaluate_once(run_dir, lambda _: None)

    shown = " ".join(cli("exam", str(run_dir), "--exam-baseline", "best-of:2",
                         "--exam-temperatures", "0.1,0.9").split())

    [exam] = read_run(run_dir)[1].exams()
    assert exam.baseline.temperatures == [0.1, 0.9]
    assert "among 2 fresh attempts (N as given, sampled at temperatures 0.1/0.9 in turn)" in shown
    sampled: dict[str, set[float]] = {}
    for path in next((run_dir / "exams").glob("*/rollouts")).glob("*.json"):
        result = RolloutResult.model_validate_json(path.read_text())
        sampled[path.stem] = {e.data["temperature"] for e in result.events
                              if e.kind == "model_call"}
    baseline = max(name[:5] for name in sampled)  # its arm comes last
    for name, temperatures in sampled.items():
        attempt = int(name.rsplit("-a", 1)[1])
        expected = ({0.1} if attempt % 2 == 0 else {0.9}) if name.startswith(baseline) else {0.2}
        assert temperatures == expected, name
    for pick in stored_picks(run_dir).values():
        assert [sampled[a] for a in pick.attempts] == [{0.1}, {0.9}]
        assert pick.chosen.endswith(("-a01", "-a03"))  # the one that wrote its file, at 0.9


@pytest.mark.slow
def test_best_of_n_does_not_win_when_only_the_evolved_harness_solves(tmp_path: Path) -> None:
    """Through `init --exam-baseline best-of`: N is the evolution's rollouts per train task."""
    suite = mark_verifiers(write_suite(tmp_path / "suite", ["alpha", "beta"], HELDOUT))
    model = write_script(tmp_path / "s.yaml", picker() + [code_agent(system_has=[HELPFUL_RULE])])
    run_dir = tmp_path / "run"
    cli("init", str(run_dir), "--tasks", str(suite), "--model", model, "-k", "2", "--exam-k",
        "2", "--exam-baseline", "best-of", "--iterations", "0")
    cli("run", str(run_dir))  # iteration 0, calibrated: 2k = 4 attempts of each task
    commit_edit(run_dir, {"op": "append_rule", "text": HELPFUL_RULE})

    result = CliRunner().invoke(app, ["exam", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    record = json.loads(result.stdout)  # progress goes to stderr

    assert record["cost"]["train_rollouts"] == 2 * 4 and record["cost"]["train_tasks"] == 2
    assert record["cost"]["rollouts"] == 6 * 4
    base = record["baseline"]
    assert (base["name"], base["n"], base["n_from"], base["picks"]) == ("best-of-4", 4,
                                                                        "evolution", 2)
    pairs = by_pair(record)
    assert pairs["seed", "final"]["verdict"] == "better"
    assert pairs["best-of-4", "final"]["verdict"] == "better"  # N x the budget did not help
    assert pairs["best-of-4", "final"]["mean"] == 1.0
    assert pairs["seed", "best-of-4"]["verdict"] == "no difference shown"
    # Nothing wrote a file: each pick's one call (4 attempts) got a reply naming no attempt.
    assert (base["picker_calls"], base["fallbacks"]) == (8, 8)
    status = json.loads(cli("status", str(run_dir), "--json"))
    assert status["exam"]["verdict"].startswith("exam on 4 held-out tasks, k=2: final vs seed: "
                                                "better by +100.0 points [")
    assert "final vs seed best-of-4: better by +100.0 points [" in status["exam"]["verdict"]
    shown = cli("status", str(run_dir)).splitlines()  # the morning view opens with the answer
    assert shown[0].startswith("the answer (exam exam-it000-") and "4 held-out tasks" in shown[0]
    assert shown[1].strip().startswith("final vs seed: better by +100.0 points [")
    assert shown[2].strip().startswith("final vs seed best-of-4: better by +100.0 points [")
    assert shown[3].strip().startswith("the evolution spent 24 rollouts, ")
    # The rule was committed by hand, without a manifest: no change of the loop's.
    assert shown[5] == "the path: no change was made"


@pytest.mark.slow
def test_a_killed_exam_keeps_its_picks_and_runs_no_stored_rollout_again(tmp_path: Path) -> None:
    script = tmp_path / "s.yaml"
    agent = code_agent(rollout_matches=r"-a03$")
    model = write_script(script, picker(wait_on="epsilon.txt") + [agent])
    run_dir = marked_run(tmp_path, model, exam={"k": 2, "baseline": "best-of:4", "picks": 1})
    evaluate_once(run_dir, lambda _: None)
    placebo(run_dir)
    log = (tmp_path / "exam.log").open("w")
    proc = subprocess.Popen([str(EVOHARNESS), "exam", str(run_dir)], stdout=log,
                            stderr=subprocess.STDOUT, start_new_session=True)
    deadline = time.monotonic() + 120  # a safety net; the kill point is a state of the files
    while len(stored_picks(run_dir)) < 2:  # gamma's and delta's; epsilon's picker is held
        assert proc.poll() is None and time.monotonic() < deadline, "no kill point"
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()

    def files() -> dict[str, int]:
        return {str(p.relative_to(run_dir)): p.stat().st_mtime_ns
                for p in (run_dir / "exams").glob("*/*/*.json")}

    before = files()
    assert sum("/rollouts/" in name for name in before) == len(HELDOUT) * (3 * 2 + 4)
    write_script(script, picker() + [agent])  # the held pick now answers

    shown = cli("exam", str(run_dir))

    after = files()
    assert {name: after[name] for name in before} == before  # nothing stored was made again
    exam_dir = next((run_dir / "exams").iterdir()).name
    assert sorted(set(after) - set(before)) == [
        f"exams/{exam_dir}/picks/write-{t}-p00.json" for t in ("epsilon", "zeta")]
    assert " pass " not in shown and " fail " not in shown  # no rollout ran
    [exam] = read_run(run_dir)[1].exams()
    assert {(c.a, c.b): c.verdict for c in exam.comparisons}[("seed", "best-of-4")] == "better"


@pytest.mark.parametrize("train_rollouts, train_tasks, n", [(5, 2, 3), (7, 2, 4), (4, 3, 1),
                                                             (0, 2, 1), (130, 3, 43)])
def test_n_is_the_train_rollouts_per_train_task_rounded_half_up(train_rollouts, train_tasks, n):
    cost = EvolutionCost(rollouts=train_rollouts + 9, train_rollouts=train_rollouts,
                         train_tasks=train_tasks, tokens=0, hours=0.0)
    assert cost.rollouts_per_train_task == n
