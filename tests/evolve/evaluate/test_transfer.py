"""`evoharness eval` and `compare` (evolve/evaluate/transfer.py, evolve/evaluate/evaluation.py) on the scripted model
(a TEST DOUBLE: tests/fixtures/e2e_agents.py): a run's seed and final commits and a plain harness
directory, on a folder of tasks without suite.toml, then their paired differences."""
from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

from typer.testing import CliRunner

from evoharness.errors import EvoError
from evoharness.evolve.cli import app
from evoharness.evolve.config import RunConfig
from evoharness.evolve.evaluate.evaluation import EvalDir
from evoharness.evolve.report.build import render_report
from evoharness.evolve.report.data import collect
from evoharness.evolve.run import init_run, open_run
from tests.fixtures import hiding
from tests.fixtures.e2e_agents import HELPFUL_RULE, solve_rule, write_script
from tests.fixtures.suites import write_suite
from evoharness.workspace.edits import apply_edits, parse_edits
from evoharness.workspace.repo import SEED_DIR


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


def test_eval_a_runs_commits_and_a_directory_then_compare_them(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.yaml", [solve_rule(has=[HELPFUL_RULE])])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta", "gamma", "delta"], [],
                       split_file=False)
    run_dir = init_run(tmp_path / "run", RunConfig(run_id="run", tasks=tasks, model=model,
                                                   split={"train": ["write-alpha"],
                                                          "heldout": ["write-beta"]})).root
    with open_run(run_dir, command="test") as run:  # the final harness: the seed plus the rule
        apply_edits(run.repo, parse_edits([{"op": "append_rule", "text": HELPFUL_RULE}]))
        run.repo.commit_change("rule", change_id="c1", component="system_prompt")
    out = run_dir / "evals" / "small"  # kept with the run: its report shows it
    options = ["--harness", f"seed={run_dir}@seed", "--harness", f"final={run_dir}",
               "--harness", f"plain={SEED_DIR}", "--model", model, "--tasks", str(tasks), "-k", "2"]

    shown = cli("eval", str(out), *options)

    assert "no suite.toml, split by a stable hash" in shown
    assert len(list(EvalDir(out).rollouts.glob("*.json"))) == 3 * 4 * 2
    rows = json.loads(cli("compare", str(out), "--json"))
    by_harness = {r["comparison"]["b"]: r["comparison"] for r in rows}
    assert set(by_harness) == {"final", "plain"}
    assert {r["comparison"]["a"] for r in rows} == {"seed"}  # the reference: the first harness
    final = by_harness["final"]
    assert final["verdict"] == "better" and final["lo"] > 0 and len(final["tasks"]) == 4
    assert final["confidence"] == 0.975  # two comparisons shown: Bonferroni
    assert by_harness["plain"]["verdict"] == "no difference shown"  # the seed, from a folder
    only = json.loads(cli("compare", str(out), "--a", "seed", "--b", "final", "--json"))
    assert [(r["comparison"]["a"], r["comparison"]["b"], r["comparison"]["confidence"])
            for r in only] == [("seed", "final", 0.95)]
    # Run again: the plan is resumed and nothing is run twice.
    assert "0 rollouts run" in cli("eval", str(out), *options)
    html = render_report(collect(run_dir))
    assert '<h2 id="transfer">Transfer</h2>' in html and "<h3>small</h3>" in html
    assert re.search(r'id="fig-comparisons" data-points="2"', html)


def test_eval_runs_only_the_task_ids_named_and_names_one_it_does_not_know(tmp_path: Path) -> None:
    model = write_script(tmp_path / "s.yaml", [solve_rule(has=[HELPFUL_RULE])])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta", "gamma"], [], split_file=False)
    options = ["--harness", f"plain={SEED_DIR}", "--model", model, "--tasks", str(tasks), "-k", "1"]
    wrong = CliRunner().invoke(app, ["eval", str(tmp_path / "wrong"), *options,
                                     "--task-ids", "write-alpha,write-omega"])
    assert isinstance(wrong.exception, EvoError) and not (tmp_path / "wrong" / "plan.json").exists()
    assert "--task-ids" in str(wrong.exception) and "['write-omega']" in str(wrong.exception)
    blank = CliRunner().invoke(app, ["eval", str(tmp_path / "blank"), *options, "--task-ids", " ,"])
    assert "no task ids given" in str(blank.exception)

    cli("eval", str(tmp_path / "two"), *options, "--task-ids", "write-gamma, write-alpha")

    [arm] = EvalDir(tmp_path / "two").plan().arms
    assert arm.tasks == ["write-alpha", "write-gamma"]  # the suite's order, not the option's
    ran = sorted(path.name for path in EvalDir(tmp_path / "two").rollouts.glob("*.json"))
    assert len(ran) == 2 and all("alpha" in name or "gamma" in name for name in ran)


def test_an_evaluation_interleaves_its_arms(tmp_path: Path, monkeypatch) -> None:
    """Rollout by rollout, not arm after arm: drift in the machine's load falls on every arm
    alike, and an evaluation stopped early leaves each task's rollouts paired."""
    from evoharness.evolve.evaluate import evaluation

    handed: list = []
    monkeypatch.setattr(evaluation, "execute_served",
                        lambda executor, specs, *rest: (handed.extend(specs), ([], []))[1])
    model = write_script(tmp_path / "s.yaml", [])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta", "gamma"], [], split_file=False)
    cli("eval", str(tmp_path / "eval"), "--harness", f"one={SEED_DIR}", "--harness",
        f"two={SEED_DIR}", "--model", model, "--tasks", str(tasks), "-k", "2")

    order = [(s.attempt, s.task.id, s.iteration) for s in handed]
    assert len(order) == 2 * 3 * 2 and order == sorted(order)
    assert [arm for *_, arm in order] == [0, 1] * 6  # each rollout of one arm beside its pair


def test_a_harness_that_hides_its_failures_as_infra_errors_compares_worse(tmp_path: Path,
                                                                         monkeypatch) -> None:
    """Both harnesses solve alpha and beta and never gamma; the hider's gamma rollouts end as
    infra errors (tests/fixtures/hiding.py), which leaves its pass rates no lower than the seed's.
    `eval` and `compare` show each side's infra errors, and the rise makes it worse."""
    hiding.patch(monkeypatch)
    monkeypatch.setenv("COLUMNS", "250")  # the table's cells unwrapped
    model = write_script(tmp_path / "s.yaml", [solve_rule(instruction_has=["alpha"]),
                                               solve_rule(instruction_has=["beta"])])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta", "gamma"], [])
    hider = Path(shutil.copytree(SEED_DIR, tmp_path / "hider"))
    (hider / "memory" / "LONG_TERM.md").write_text(f"{hiding.HIDES}\n")
    out = tmp_path / "eval"
    shown = cli("eval", str(out), "--harness", f"seed={SEED_DIR}", "--harness", f"hider={hider}",
                "--model", model, "--tasks", str(tasks), "--split", "train", "-k", "2")
    [row] = json.loads(cli("compare", str(out), "--json"))
    c = row["comparison"]
    assert (c["a_infra"], c["b_infra"]) == ({"errors": 0, "rollouts": 6},
                                            {"errors": 2, "rollouts": 6})
    assert c["verdict"] == "worse" and c["mean"] >= 0  # no lower in pass rate, and worse
    assert "0/6, 2/6" in shown and "worse (more infra errors)" in shown


def _two_harnesses(tmp_path: Path) -> tuple[list[str], Path]:
    """`eval` options for a run's seed and its final commit (the seed plus the rule the scripted
    model needs to solve a task), on two tasks, one rollout each; and the run."""
    model = write_script(tmp_path / "s.yaml", [solve_rule(has=[HELPFUL_RULE])])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta"], [], split_file=False)
    run_dir = init_run(tmp_path / "run", RunConfig(run_id="run", tasks=tasks, model=model,
                                                   split={"train": ["write-alpha"],
                                                          "heldout": ["write-beta"]})).root
    with open_run(run_dir, command="test") as run:
        apply_edits(run.repo, parse_edits([{"op": "append_rule", "text": HELPFUL_RULE}]))
        run.repo.commit_change("rule", change_id="c1", component="system_prompt")
    return ["--model", model, "--tasks", str(tasks), "-k", "1"], run_dir


def _compared(*args: str) -> dict:
    result = CliRunner().invoke(app, ["compare", *args, "--json"])
    assert result.exit_code == 0, result.output
    [row] = json.loads(result.stdout)
    return {"stderr": result.stderr, **row["comparison"]}


def test_compare_pools_evaluations_of_the_same_harnesses(tmp_path: Path) -> None:
    """Two evaluations of one pair of harnesses count as one with every task's rollouts of both;
    one given twice (a copy) is refused, and so is a harness name that means another harness in
    one of them, naming it."""
    options, run_dir = _two_harnesses(tmp_path)
    pair = ["--harness", f"seed={run_dir}@seed", "--harness", f"final={run_dir}"]
    first, second, other = tmp_path / "first", tmp_path / "second", tmp_path / "other"
    cli("eval", str(first), *pair, *options)
    cli("eval", str(second), *pair, *options)

    alone, pooled = _compared(str(first)), _compared(str(first), str(second))

    assert [(t["a"]["total"], t["b"]["total"]) for t in alone["tasks"]] == [(1, 1)] * 2
    assert [(t["a"], t["b"]) for t in pooled["tasks"]] == \
        [({"passes": 0, "total": 2}, {"passes": 2, "total": 2})] * 2
    assert pooled["mean"] == 1.0 and pooled["se"] < alone["se"]  # more rollouts, less noise
    shutil.copytree(first, tmp_path / "copy")
    twice = CliRunner().invoke(app, ["compare", str(first), str(tmp_path / "copy")])
    assert "the same evaluation as" in str(twice.exception)  # its rollouts would count twice
    cli("eval", str(other), "--harness", f"seed={run_dir}@seed", "--harness",
        f"final={SEED_DIR}", *options)  # "final" is the seed's content here
    refused = CliRunner().invoke(app, ["compare", str(first), str(other)])
    assert isinstance(refused.exception, EvoError)
    assert "'final' is another harness" in str(refused.exception)
    assert str(other / "plan.json") in str(refused.exception)


def test_compare_stores_what_a_stopped_evaluation_left(tmp_path: Path, monkeypatch) -> None:
    """`eval` stores its rollouts at its end; one stopped before then leaves their files. Compare
    stores them first, unless an evaluation holds the folder (they are its own to store)."""
    from evoharness.evolve.ledger import lock

    options, run_dir = _two_harnesses(tmp_path)
    out = tmp_path / "eval"
    cli("eval", str(out), "--harness", f"seed={run_dir}@seed", "--harness", f"final={run_dir}",
        *options)
    folder = EvalDir(out)
    folder.db.unlink()  # as if stopped after its rollouts ran, before storing them
    monkeypatch.setattr(lock, "ACQUIRE_S", 0.0)  # a held lock: refused at once
    running = lock.RunLock(folder.lock)
    running.acquire("eval")

    while_running = CliRunner().invoke(app, ["compare", str(out), "--json"])

    assert "an evaluation is running there" in while_running.stderr
    assert "no trace database here" in str(while_running.exception)  # nothing stored yet
    running.release()
    after = _compared(str(out))
    assert "stored 4 rollouts a stopped evaluation left" in after["stderr"]
    assert [(t["a"]["total"], t["b"]["passes"]) for t in after["tasks"]] == [(1, 1)] * 2
    assert "stored" not in _compared(str(out))["stderr"]  # nothing left the second time


def test_eval_of_one_tasks_folder_says_how_to_name_it(tmp_path: Path) -> None:
    """It ran nothing ("0 rollouts run"): a task's folder holds no task folders."""
    model = write_script(tmp_path / "s.yaml", [solve_rule(has=[HELPFUL_RULE])])
    tasks = write_suite(tmp_path / "tasks", ["alpha", "beta"], [], split_file=False)
    one = tasks / "write-alpha"
    options = ["--harness", f"plain={SEED_DIR}", "--model", model, "-k", "1"]
    done = CliRunner().invoke(app, ["eval", str(tmp_path / "one"), *options, "--tasks", str(one)])
    assert isinstance(done.exception, EvoError), done.output
    said = str(done.exception)
    assert str(one) in said and f"--task-ids {one.name}" in said and "\n" not in said
    assert not (tmp_path / "one" / "plan.json").exists()
    cli("eval", str(tmp_path / "named"), *options, "--tasks", str(tasks), "--task-ids", one.name)
    assert len(list(EvalDir(tmp_path / "named").rollouts.glob("*.json"))) == 1
