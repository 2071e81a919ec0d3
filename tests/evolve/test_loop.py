"""evolve/loop.py and phases.py: resuming at the edges of a phase (a crash after a phase's work but
before it was recorded), every stop rule driven through the loop (budgets counted over processes),
the extra rollouts of a fix on the threshold, on the e2e fixture suite with the scripted model
playing both agents."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import duckdb

from evoharness.evolve import phases
from evoharness.evolve.config import RunConfig, StopRules, load_config, save_config
from evoharness.evolve.ledger import EVALUATE, PHASE_ORDER, Phase
from evoharness.evolve.loop import LoopResult, evolve, run_phases
from evoharness.evolve.run import init_run, open_run, read_run
from tests.fixtures.e2e_agents import (
    HARMFUL_RULE, HELPFUL_RULE, NOTHING_JUDGED, agents, change, done, evolve_rule, solve_rule, write_script,
)

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]


def evaluated_run(tmp_path: Path) -> Path:
    """A run whose baseline is evaluated (stopped cleanly after DISTILL of iteration 0)."""
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, TRAIN), done()],
                   solves_with=[HELPFUL_RULE])
    config = RunConfig(run_id="loop", tasks=SUITE, model=model, k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=0))
    run_dir = init_run(tmp_path / "run", config).root
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    return run_dir


def evolve_sessions(run_dir: Path) -> int:
    return len(list((run_dir / "iterations").glob("it*/evolve_trace.json")))


def test_evolve_that_registered_its_manifest_is_not_run_again(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)
    with open_run(run_dir) as run:  # EVOLVE's work done, then a crash before it was recorded
        phases.evolve_harness(run, 0)
        head = run.repo.head()
    trace = (run_dir / "iterations/it000/evolve_trace.json").read_text()

    evolve(run_dir, iterations=1, resume=True, say=lambda _: None)

    assert (run_dir / "iterations/it000/evolve_trace.json").read_text() == trace  # not rerun
    with open_run(run_dir) as run:
        assert run.ledger.phases_done(0) == set(PHASE_ORDER)
        assert run.ledger.phases_done(1) == set(EVALUATE)
        assert run.ledger.phase(0, Phase.EVOLVE).result.resumed
        [entry] = run.ledger.manifest(0, run.train_ids).changes
        assert entry.commit == head
        [record] = run.ledger.changes()
    assert record.decision == "keep"


def test_a_clean_stop_continues_without_resume(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)

    result = evolve(run_dir, iterations=1, resume=False, say=lambda _: None)

    assert result.last_iteration == 1
    with open_run(run_dir) as run:
        assert run.ledger.phases_done(1) == set(EVALUATE)


def test_at_the_limit_a_harness_evaluated_before_is_not_evaluated_again(tmp_path: Path) -> None:
    """The only change is reverted, which leaves the seed that iteration 0 evaluated: the run
    stops at its limit without evaluating it again. A higher limit evaluates it (the next
    iteration's evolve session needs it), and a resume of a stopped run does not."""
    model = agents(tmp_path / "s.yaml", [change(HARMFUL_RULE, ["write-alpha"]), done()],
                   solves_without=[HARMFUL_RULE])
    config = RunConfig(run_id="limit", tasks=SUITE, model=model, k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=1))
    run_dir = init_run(tmp_path / "run", config).root

    first = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    again = evolve(run_dir, iterations=None, resume=True, say=lambda _: None)
    with open_run(run_dir) as run:
        assert [r.decision for r in run.ledger.changes()] == ["revert"]
        assert run.ledger.phases_done(1) == set()
    assert first.stop_reason == again.stop_reason == (
        "1 iteration(s) done; the harness left is iteration 0's, not evaluated again")
    assert status_line(run_dir) == f"stopped after iteration 1: {first.stop_reason}"
    with open_run(run_dir) as run:  # a process went on from there (and stopped unfinished)
        run_phases(run, 1, EVALUATE, lambda _: None, None)
    assert status_line(run_dir) == "next: iteration 1 EVOLVE"

    evolve(run_dir, iterations=2, resume=False, say=lambda _: None)
    with open_run(run_dir) as run:
        assert set(EVALUATE) <= run.ledger.phases_done(1)
    # the stop of the process that raised the limit, not run.yaml's limit of 1
    assert status_line(run_dir).startswith("stopped after iteration 2: 2 iteration(s) done")


def status_line(run_dir: Path) -> str:
    """`evoharness status`'s line on where the run is."""
    result = subprocess.run([str(Path(sys.executable).parent / "evoharness"), "status",
                             str(run_dir)], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    return next(line for line in result.stdout.splitlines()
                if line.startswith(("stopped after", "next:")))


def test_the_wall_time_budget_counts_earlier_processes(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)
    paths, config = load_config(run_dir)
    spent = 0.01  # less than any real evaluation takes, more than a resumed no-op
    stop = StopRules(iterations=3, wall_seconds=spent)
    save_config(paths, config.model_copy(update={"stop": stop}))

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert (result.last_iteration, result.stop_reason) == (0, "wall-time budget of 0s spent")
    assert evolve_sessions(run_dir) == 0


def test_a_phase_recorded_on_disk_but_not_in_the_store_is_indexed_at_the_next_open(
        tmp_path: Path) -> None:
    """The record file is the truth: a crash between writing it and indexing it loses nothing."""
    run_dir = evaluated_run(tmp_path)
    with duckdb.connect(str(run_dir / "traces.duckdb")) as con:  # the row never made it
        con.execute("DELETE FROM iterations WHERE phase = 'DISTILL'")
    with open_run(run_dir) as run, run.ledger.reading() as store:
        detail = store.con.execute(
            "SELECT detail FROM iterations WHERE phase = 'DISTILL'").fetchone()[0]
    assert json.loads(detail)["overview"].endswith("overview.md")


def evolve_with(run_dir: Path, **stop) -> LoopResult:
    """Go on evolving a cleanly stopped run under the stop rules `stop` (in run.yaml)."""
    paths, config = load_config(run_dir)
    save_config(paths, config.model_copy(update={"stop": StopRules(**stop)}))
    return evolve(run_dir, iterations=None, resume=False, say=lambda _: None)


def train_rates(run_dir: Path) -> list[float]:
    """Each evaluation's train pass rate (a change's trial rollouts are not an evaluation)."""
    with open_run(run_dir) as run, run.ledger.reading() as store:
        return [rate for (rate,) in store.con.execute(
            "SELECT avg(CASE WHEN outcome = 'pass' THEN 1.0 ELSE 0.0 END) FROM rollouts "
            "WHERE split = 'train' AND trial_change = '' GROUP BY iteration ORDER BY iteration"
        ).fetchall()]


def test_the_target_pass_rate_stops_the_run_when_reached(tmp_path: Path) -> None:
    run_dir = evaluated_run(tmp_path)  # 0% at the baseline; the evolve agent's rule solves both

    result = evolve_with(run_dir, iterations=5, target_pass_rate=1.0)

    assert (result.last_iteration, result.stop_reason) == (
        1, "train pass rate 100% reached the target 100%")
    assert train_rates(run_dir) == [0.0, 1.0]


def test_patience_counts_the_iterations_since_the_best_pass_rate(tmp_path: Path) -> None:
    """The first change solves write-alpha (0% -> 50%, kept); the next solves nothing (reverted)
    and the session after it repeats that reverted rule, which is refused (50%, 50%). With
    patience 2 the run stops two iterations after the best one, iteration 1: at 3, not at 2 as it
    would counting from the baseline."""
    model = write_script(tmp_path / "s.yaml", [
        evolve_rule([change(HELPFUL_RULE, ["write-alpha"]), done()], also_has=[NOTHING_JUDGED]),
        evolve_rule([change("Keep replies short.", ["write-beta"]), done()]),
        solve_rule(has=[HELPFUL_RULE], instruction_has=["alpha.txt"]),
    ])
    config = RunConfig(run_id="patience", tasks=SUITE, task_ids=TRAIN, model=model, k=1,
                       workers=2, rollout_timeout=60, stop=StopRules(iterations=0))
    run_dir = init_run(tmp_path / "run", config).root

    result = evolve_with(run_dir, iterations=6, patience=2)

    assert (result.last_iteration, result.stop_reason) == (3, "no improvement for 2 iteration(s)")
    assert train_rates(run_dir) == [0.0, 0.5, 0.5, 0.5]
    _, ledger = read_run(run_dir)
    assert [(r.iteration, r.decision) for r in ledger.changes()] == [(0, "keep"), (1, "revert")]
    assert ledger.manifest(2).no_change_reason


def test_the_token_budget_counts_both_agents_and_stops_the_run(tmp_path: Path) -> None:
    """A budget one token above the baseline's use: the baseline stays under it, and the first
    iteration after it spends it, counting the code agent's rollouts and the evolve agent's
    session, as recorded in the store and in the evolve trace."""
    run_dir = evaluated_run(tmp_path)
    baseline = rollout_tokens(run_dir)

    result = evolve_with(run_dir, iterations=5, tokens=baseline + 1)

    spent = rollout_tokens(run_dir) + evolve_tokens(run_dir)
    assert rollout_tokens(run_dir) > baseline and evolve_tokens(run_dir) > 0
    assert (result.last_iteration, result.stop_reason) == (
        1, f"token budget spent ({spent:,} of {baseline + 1:,})")


def rollout_tokens(run_dir: Path) -> int:
    with open_run(run_dir) as run, run.ledger.reading() as store:
        return store.con.execute("SELECT sum(tokens_in + tokens_out) FROM rollouts").fetchone()[0]


def evolve_tokens(run_dir: Path) -> int:
    """The evolve agent's tokens, from its sessions' traces (not from the loop's own count)."""
    traces = (run_dir / "iterations").glob("it*/evolve_trace.json")
    return sum(e["tokens_in"] + e["tokens_out"] for t in traces
               for e in json.loads(t.read_text()))


def test_an_iterations_override_is_kept_for_the_resume(tmp_path: Path) -> None:
    """`evolve --iterations 2` then a resume without it: the run keeps the 2, not run.yaml's 0."""
    run_dir = evaluated_run(tmp_path)
    said: list[str] = []

    evolve(run_dir, iterations=2, resume=False, say=said.append)

    assert load_config(run_dir)[1].stop.iterations == 2
    assert any("stop rule: 2 iteration(s)" in line for line in said)
