"""End to end: the whole loop (evolve/loop.py) on the e2e fixture suite, with the scripted model
playing a code agent and an evolve agent (tests/fixtures/e2e_agents.py)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evoharness.debugger.analyst import SYSTEM as ANALYST_SYSTEM
from evoharness.evolve.cli import app
from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.ledger import PHASE_ORDER, Phase
from evoharness.evolve.loop import evaluate_once, evolve
from evoharness.evolve.report.data import collect
from evoharness.evolve.run import init_run, open_run, read_run
from tests.fixtures.e2e_agents import (
    HARMFUL_RULE, HELPFUL_RULE, MANIFEST, NOTHING_JUDGED, OTHER_HARMFUL_RULE, action, agents,
    change, done, evolve_rule, harmful_rules, solve_rule, write_script,
)
from evoharness.workspace.repo import SEED_DIR

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]


def make_run(tmp_path: Path, model: str, iterations: int = 1, **options) -> Path:
    config = RunConfig(**{"run_id": "e2e", "tasks": SUITE, "model": model, "k": 1, "workers": 2,
                          "rollout_timeout": 60, "stop": StopRules(iterations=iterations),
                          **options})
    return init_run(tmp_path / "run", config).root


def status(run_dir: Path) -> dict:
    result = CliRunner().invoke(app, ["status", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def phases_of(run_dir: Path) -> dict[int, list[str]]:
    found: dict[int, list[str]] = {}
    for record in read_run(run_dir)[1].phase_records():
        found.setdefault(record.iteration, []).append(record.phase.value)
    return found


def judged(run_dir: Path) -> list[tuple[str, str, bool]]:
    """(verdict, decision, placebo) of every judged change, by change id."""
    return [(r.verdict, r.decision, r.placebo) for r in read_run(run_dir)[1].changes()
            if r.judgement is not None]


def evolve_calls(run_dir: Path) -> int:
    """Model calls of the evolve agent's sessions, from their traces."""
    traces = (run_dir / "iterations").glob("it*/evolve_trace.json")
    return sum(1 for t in traces for e in json.loads(t.read_text()) if e["kind"] == "model_call")


def test_a_helpful_edit_is_kept_and_the_pass_rate_rises(tmp_path: Path) -> None:
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, TRAIN), done()],
                   solves_with=[HELPFUL_RULE])
    run_dir = make_run(tmp_path, model)

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert result.last_iteration == 1
    assert [d for _, d, _ in judged(run_dir)] == ["keep"]
    rows = status(run_dir)["iterations"]
    assert [r["pass_rate_train"] for r in rows] == [0.0, 1.0]
    assert rows[0]["kept"] == 1 and rows[0]["reverted"] == 0
    with open_run(run_dir) as run:
        assert HELPFUL_RULE in run.repo.read_file("system_prompt.md.j2", "HEAD")
    assert evolve_calls(run_dir) == 2


def test_b_harmful_edit_is_reverted_to_the_tree_before_it(tmp_path: Path) -> None:
    model = agents(tmp_path / "s.yaml", [change(HARMFUL_RULE, ["write-alpha"]), done()],
                   solves_without=[HARMFUL_RULE])
    run_dir = make_run(tmp_path, model)
    with open_run(run_dir) as run:
        before = run.repo.tree_id()

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    # its predicted fix fails on the change arm and passes on the base arm: not shown
    assert [(v, d) for v, d, _ in judged(run_dir)] == [("not_shown", "revert")]
    with open_run(run_dir) as run:
        assert run.repo.tree_id() == before
        assert run.repo.log()[0].summary.startswith("Revert")
    # judged and reverted in its own iteration; the harness left is the seed, which iteration 0
    # evaluated, so at the iteration limit it is not evaluated again
    assert result.stop_reason == ("1 iteration(s) done; the harness left is iteration 0's, "
                                  "not evaluated again")
    rows = status(run_dir)["iterations"]
    assert [r["pass_rate_train"] for r in rows] == [1.0]
    assert rows[0]["reverted"] == 1
    assert phases_of(run_dir) == {0: [p.value for p in PHASE_ORDER]}


def test_c_invalid_manifest_records_no_change_and_the_loop_goes_on(tmp_path: Path) -> None:
    bad = change(HELPFUL_RULE, ["no-such-task"])
    model = agents(tmp_path / "s.yaml", [bad, bad, bad, done()], solves=False)
    run_dir = make_run(tmp_path, model, iterations=2)

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert result.last_iteration == 2
    with open_run(run_dir) as run:
        manifest = run.ledger.manifest(0, run.train_ids)
        assert run.repo.log()[0].summary == run.repo.log()[-1].summary  # only the seed commit
    assert manifest.changes == [] and "invalid manifest" in manifest.no_change_reason
    assert "no-such-task" in manifest.no_change_reason
    done_phases = phases_of(run_dir)
    assert done_phases[0] == done_phases[1] == list(PHASE_ORDER)
    assert 2 not in done_phases  # the seed again, at the limit: not evaluated a third time
    assert evolve_calls(run_dir) == 2 * 3  # two sessions of three refused calls each, no done


def test_a_placebo_edit_is_labelled_and_reverted(tmp_path: Path) -> None:
    """A comment-only edit predicting a fix changes nothing the agent meets: it must not be kept."""
    seed = (SEED_DIR / "harness.yaml").read_text()
    placebo = action("change", edit={"op": "write_file", "path": "harness.yaml",
                                     "content": seed + "# the agent should check its work\n"},
                     **MANIFEST)
    run_dir = make_run(tmp_path, agents(tmp_path / "s.yaml", [placebo, done()], solves=False))

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    [(verdict, decision, placebo_label)] = judged(run_dir)
    assert decision == "revert" and placebo_label, verdict
    assert collect(run_dir).summary()["placebos"] == {"n": 1, "kept": 0}  # the false-accept rate


def test_a_rule_the_agent_reads_is_no_placebo(tmp_path: Path) -> None:
    model = agents(tmp_path / "s.yaml", [change(HELPFUL_RULE, TRAIN), done()], solves=False)
    run_dir = make_run(tmp_path, model)

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    [(_, decision, placebo_label)] = judged(run_dir)
    assert decision == "revert" and not placebo_label


@pytest.mark.slow  # three iterations, each change with its trial: over 20 CPU-seconds
def test_every_reader_agrees_with_the_loops_verdicts_across_a_run_with_reverts(
        tmp_path: Path) -> None:
    """Kept, reverted, judged by the loop: manifest show, the report, status, the scoreboard the
    overview and the evolve agent read, and the store's index all say what the loop decided."""
    model = write_script(tmp_path / "s.yaml", [
        evolve_rule([change(HELPFUL_RULE, TRAIN), done()],
                    also_has=[NOTHING_JUDGED]),
        *harmful_rules(["write-alpha"]),
        solve_rule(has=[HELPFUL_RULE], lacks=[HARMFUL_RULE, OTHER_HARMFUL_RULE]),
    ])
    run_dir = make_run(tmp_path, model, iterations=3, calibration=True, k=2)

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    # the last change was reverted, so the limit left iteration 3 unevaluated; `run` evaluates
    # it, and its overview's scoreboard holds every verdict
    evaluate_once(run_dir, say=lambda _: None)

    _, ledger = read_run(run_dir)
    loop = {change: decision for r in ledger.phase_records() if r.phase == Phase.TRIAL
            for change, decision in r.result.decisions.items()}  # what the loop decided
    assert sorted(loop.values()) == ["keep", "revert", "revert"]
    shown = json.loads(CliRunner().invoke(app, ["manifest", "show", str(run_dir), "--json"]).output)
    assert {d["change"]["id"]: d["decision"] for d in shown} == loop
    assert {d["change"]["id"]: d["judgement"]["verdict"]["decision"] for d in shown} == loop
    report = collect(run_dir)
    assert {r.change_id: r.decision for r in report.changes} == loop
    assert report.scores == ledger.scoreboard().iterations
    board = ledger.scoreboard()
    assert {r.change_id: r.decision for r in board.rows} == loop
    for row in board.rows:
        assert f"| {row.change_id} |" in (run_dir / "iterations/it003/evidence/overview.md").read_text()
    rows = status(run_dir)["iterations"]
    assert sum(r["kept"] for r in rows) == 1 and sum(r["reverted"] for r in rows) == 2
    with ledger.reading() as store:
        indexed = dict(store.con.execute("SELECT change_id, decision FROM verdicts").fetchall())
        reverted = {c for (c,) in store.con.execute("SELECT change_id FROM reverts").fetchall()}
    assert indexed == loop and reverted == {c for c, d in loop.items() if d == "revert"}
    # overview.md shows real scores once a change has been judged: one change, kept, and the
    # rollouts its trial spent
    overview = (run_dir / "iterations/it001/evidence/overview.md").read_text()
    kept = next(r for r in board.rows if r.decision == "keep")
    assert kept.iteration == 0 and kept.rollouts > 0 and NOTHING_JUDGED not in overview
    assert f"| run | 1 | 1 | n/a | n/a | n/a | n/a | +50.0 | +100.0 | {kept.rollouts} | 2 |" \
        in overview


def test_the_analyst_adds_root_causes_when_the_run_asks_for_it(tmp_path: Path) -> None:
    """`init --analyst` turns it on; DISTILL then asks the evolve model about each failing task."""
    model = write_script(tmp_path / "s.yaml", [
        {"when": {"system_has": [ANALYST_SYSTEM[:40]]},
         "replies": [{"text": "Root cause: the prompt never says to run the RUN line."}]},
    ])  # no rule for the code agent: it calls done at once, so every task fails
    made = CliRunner().invoke(app, ["init", str(tmp_path / "run"), "--tasks", str(SUITE),
                                    "--model", model, "-k", "1", "--iterations", "0",
                                    "--analyst"])
    assert made.exit_code == 0, made.output
    run_dir = tmp_path / "run"

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    evidence = run_dir / "iterations/it000/evidence"
    for task in TRAIN:
        assert ("## Analyst\n\nRoot cause: the prompt never says to run the RUN line."
                in (evidence / "tasks" / f"{task}.md").read_text())
    assert "analyst: root causes for 2 failing tasks" in (evidence / "overview.md").read_text()
    distilled = read_run(run_dir)[1].phase(0, Phase.DISTILL).result
    assert distilled.analyst_failed == []
