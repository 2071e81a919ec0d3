"""The TRIAL phase through the real loop (real sandbox and verifier, the e2e fixture tasks, the
scripted model as both agents): each change judged alone against the harness its session started
from, or against its parent when it does not apply alone; a sibling's regression never charged
to another change; a trial interrupted mid-batch resumes to the same verdicts without running a
stored rollout again; the store rebuilt from the files replays to the stored verdicts.

TEST DOUBLES: the agents are scripts (tests/fixtures/e2e_agents.py); the code agent's outcome is
decided by markers in its system prompt, with a seeded per-rollout coin where a test needs
chance."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoharness.evolve.cli import main
from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.ledger import Phase
from evoharness.evolve.loop import evolve
from evoharness.evolve.run import init_run, open_run, read_run
from evoharness.evolve.trials import outcomes, probe_pairs_to_cap, stored_rollouts, trial_of
from evoharness.manifests.design import TrialDesign
from tests.fixtures import hiding
from tests.fixtures.e2e_agents import (
    MANIFEST, action, change, done, evolve_rule, solve_rule, write_script,
)

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
ALPHA, BETA, GAMMA = "ALPHA-RULE", "BREAKS-BETA", "GAMMA-RULE"

pytestmark = pytest.mark.slow  # a real run of three trials: about 20 s on a loaded machine


def all_train_suite(root: Path) -> Path:
    """The e2e suite with all three tasks in the train split (each trial needs three)."""
    shutil.copytree(SUITE, root)
    (root / "suite.toml").write_text(
        '[split]\ntrain = ["write-alpha", "write-beta", "write-gamma"]\nheldout = []\n')
    return root


def script(path: Path, alpha_p: float = 1.0) -> str:
    """A: a rule that fixes alpha. B: a memory note that also fixes alpha but breaks beta.
    C: a rule that fixes gamma, appended after A's (so it does not apply without A). The code
    agent passes alpha with ALPHA-RULE (with probability `alpha_p`), gamma with GAMMA-RULE, and
    beta unless BREAKS-BETA is in its prompt."""
    memory = action("change", edit={"op": "write_file", "path": "memory/LONG_TERM.md",
                                    "content": f"{ALPHA} and {BETA}\n"},
                    **{**MANIFEST, "component": "memory"})  # predicts a fix of write-alpha
    return write_script(path, [
        evolve_rule([change(ALPHA, ["write-alpha"]), memory, change(GAMMA, ["write-gamma"]),
                     done()]),
        {**solve_rule(has=[ALPHA], instruction_has=["alpha"]), "probability": alpha_p},
        solve_rule(has=[GAMMA], instruction_has=["gamma"]),
        solve_rule(lacks=[BETA], instruction_has=["beta"]),
    ])


def make_run(root: Path, model: str, suite: Path, verdicts: TrialDesign = TrialDesign()) -> Path:
    config = RunConfig(run_id="trials", tasks=suite, model=model, k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=1), verdicts=verdicts)
    return init_run(root, config).root


def test_each_change_is_judged_on_its_own_evidence(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path / "run", script(tmp_path / "s.yaml"),
                       all_train_suite(tmp_path / "suite"))

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    _, ledger = read_run(run_dir)
    a, b, c = ledger.manifest(0).changes
    judged = ledger.judgements()
    assert [(judged[x.id].outcome, judged[x.id].decision, judged[x.id].setup.applied)
            for x in (a, b, c)] == [("effective", "keep", "alone"),
                                    ("regression", "revert", "alone"),
                                    ("effective", "keep", "on_parent")]
    start = ledger.manifest(0).harness_commit_before
    with open_run(run_dir) as run:
        repo = run.repo
        # B alone: its tree is the start's plus its memory note only, not A's rule
        sb = judged[b.id].setup
        assert sb.base_commit == start and repo.parent(sb.change_commit) == start
        assert ALPHA not in repo.read_file("system_prompt.md.j2", sb.change_commit)
        assert repo.commit_info(f"trial/{b.id}").sha == sb.change_commit
        # C against its parent (start + A + B), where B already broke beta
        sc = judged[c.id].setup
        assert (sc.base_commit, sc.change_commit) == (repo.parent(c.commit), c.commit)
        assert sc.history.counts == {} and sc.candidates.tree == repo.tree_id(start)
        # the surviving head: A and C, B reverted; the next evaluation passes everything
        head = repo.read_file("system_prompt.md.j2")
        assert ALPHA in head and GAMMA in head
        assert BETA not in repo.read_file("memory/LONG_TERM.md")
    # the history is the baseline's (calibrated, k=1: 2 rollouts a task), no trial rollout in it
    assert {t: str(n) for t, n in judged[a.id].setup.history.counts.items()} == {
        "write-alpha": "0/2", "write-beta": "2/2", "write-gamma": "0/2"}
    by_task = {t.task_id: t for t in judged[b.id].verdict.tasks}
    assert (by_task["write-beta"].role, by_task["write-beta"].result) == ("screen", "regressed")
    # beta fails on C's base arm too (B's doing): dropped from C's screen, not charged to C
    by_task = {t.task_id: t for t in judged[c.id].verdict.tasks}
    assert by_task["write-beta"].result == "dropped"
    trial = ledger.phase(0, Phase.TRIAL).result
    assert (trial.alone, trial.on_parent) == ([a.id, b.id], [c.id])
    with ledger.reading() as store:
        rows = store.con.execute(
            "SELECT rollout_id, trial_change, trial_arm, iteration FROM rollouts "
            "WHERE trial_change <> ''").fetchall()
        rates = store.con.execute(
            "SELECT iteration, avg((outcome = 'pass')::INT) FROM rollouts WHERE trial_change = '' "
            "GROUP BY 1 ORDER BY 1").fetchall()
    assert rows and all(r[0].startswith(f"it000-trial-{r[1]}-{r[2]}-write-") and r[3] == 0
                        for r in rows)
    assert len(rows) == trial.rollouts
    assert rates == [(0, 1 / 3), (1, 1.0)]  # trial rollouts never count as the evaluation's


def test_probes_run_on_to_their_caps_leave_every_verdict_as_it_was(tmp_path: Path) -> None:
    """benchmarks/remedies.py's fixed-size estimate: after the trials decide (A kept early,
    B reverted, C kept), every probe runs on to its cap; the verdicts replay the same on the
    longer record (but for the count of rollouts recorded), and a second call runs nothing. The
    cap is 24 probe rollouts, not 100: what runs past the decision is the same at any cap."""
    run_dir = make_run(tmp_path / "run", script(tmp_path / "s.yaml"),
                       all_train_suite(tmp_path / "suite"), TrialDesign(max_rollouts=24))
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    ran: list[str] = []
    with open_run(run_dir) as run:
        changes = run.ledger.manifest(0).changes
        before = {c.id: sum(map(len, stored_rollouts(run, 0)[c.id].values())) for c in changes}
        pairs = probe_pairs_to_cap(run, 0, lambda result: ran.append(result.rollout_id))
        stored = stored_rollouts(run, 0)
        after = {c.id: sum(map(len, stored[c.id].values())) for c in changes}
        for c in changes:
            judgement = run.ledger.judgement(c.id)
            plan = trial_of(c, judgement.setup).probe
            cap = plan.pairs_at_cap
            assert plan.tasks == ["write-alpha"] or plan.tasks == ["write-gamma"]
            assert len(pairs[c.id]) == cap and cap > judgement.verdict.rollouts.base
            replayed = trial_of(c, judgement.setup).step(outcomes(stored[c.id])).verdict
            assert replayed.rollouts.recorded == after[c.id]  # the one figure that counts them all
            assert replayed.model_copy(update={"rollouts": replayed.rollouts.model_copy(
                update={"recorded": judgement.verdict.rollouts.recorded})}) == judgement.verdict
        assert pairs[changes[0].id] == [(False, True)] * len(pairs[changes[0].id])
        assert len(ran) == sum(after.values()) - sum(before.values())
        assert probe_pairs_to_cap(run, 0, lambda result: ran.append("again")) == pairs
    assert "again" not in ran


def test_a_trial_interrupted_mid_batch_resumes_to_the_same_verdicts(tmp_path: Path) -> None:
    """Twin runs (same run id, so the same per-rollout coins): one runs straight through, the
    other is stopped inside TRIAL after a few rollouts, at a progress point, and resumed. Same
    verdicts, no rollout stored twice; then the store is rebuilt from the files and every
    verdict replays from it. Trials are capped at 24 probe rollouts: a stop inside one is the
    same at any cap."""
    suite = all_train_suite(tmp_path / "suite")
    model = script(tmp_path / "s.yaml", alpha_p=0.7)
    design = TrialDesign(max_rollouts=24)
    straight = make_run(tmp_path / "straight", model, suite, design)
    evolve(straight, iterations=None, resume=False, say=lambda _: None)

    stopped = make_run(tmp_path / "stopped", model, suite, design)
    seen: list[str] = []

    def stop_inside_trial(result) -> None:
        if result.trial_change:
            seen.append(result.rollout_id)
            if len(seen) == 5:
                raise KeyboardInterrupt("stopped at a progress point")

    with pytest.raises(KeyboardInterrupt):
        evolve(stopped, iterations=None, resume=False, say=lambda _: None,
               on_rollout=stop_inside_trial)
    _, ledger = read_run(stopped)
    assert ledger.position() == (0, {Phase.EVAL, Phase.INGEST, Phase.DISTILL, Phase.EVOLVE,
                                     Phase.COMMIT})
    evolve(stopped, iterations=None, resume=True, say=lambda _: None)

    def verdicts(run_dir: Path) -> dict:
        return {cid: (j.setup.base_tree, j.setup.change_tree, j.verdict)
                for cid, j in read_run(run_dir)[1].judgements().items()}

    assert verdicts(stopped) == verdicts(straight)
    with read_run(stopped)[1].reading() as store:
        ids = [r for (r,) in store.con.execute("SELECT rollout_id FROM rollouts").fetchall()]
    files = [p.stem for p in stopped.glob("iterations/*/*/*.json")]
    assert len(ids) == len(set(ids)) and sorted(ids) == sorted(files)

    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "rebuild", str(stopped)])
    assert exit_info.value.code == 0
    with open_run(stopped) as run:
        stored = stored_rollouts(run, 0)
        for entry in run.ledger.manifest(0).changes:
            judgement = run.ledger.judgement(entry.id)
            replayed = trial_of(entry, judgement.setup).step(outcomes(stored[entry.id]))
            assert replayed.verdict == judgement.verdict, entry.id


def test_a_change_that_turns_its_failures_into_infra_errors_is_not_kept(tmp_path: Path,
                                                                        monkeypatch) -> None:
    """A placebo (alpha passes half the time with or without it) whose failing rollouts end as
    infra errors: left out, its arm would pass alpha every time and the change be kept; counted
    as failures of its arm, it is the placebo it is."""
    hiding.patch(monkeypatch)
    model = write_script(tmp_path / "s.yaml", [
        evolve_rule([change(hiding.HIDES, ["write-alpha"]), done()]),
        {**solve_rule(instruction_has=["alpha"]), "probability": 0.5},
        solve_rule(instruction_has=["beta"]),
    ])
    run_dir = make_run(tmp_path / "run", model, all_train_suite(tmp_path / "suite"))
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)
    _, ledger = read_run(run_dir)
    [entry] = ledger.manifest(0).changes
    judgement = ledger.judgements()[entry.id]
    with open_run(run_dir) as run:
        rows = stored_rollouts(run, 0)[entry.id]
    hidden = [r for r in rows[("change", "write-alpha")] if r.outcome == "infra_error"]
    assert hidden, "the change's failures were infra errors"
    assert (judgement.outcome, judgement.decision) == ("not_shown", "revert"), judgement.verdict


# --- validation tasks: a change must help where its failure shows beyond its own tasks ---------

CARRIES = "CARRIES-OVER"


def validation_suite(root: Path) -> Path:
    """alpha and beta to train on, gamma to validate on (the evolve agent never sees it)."""
    shutil.copytree(SUITE, root)
    (root / "suite.toml").write_text('[split]\ntrain = ["write-alpha", "write-beta"]\n'
                                     'validation = ["write-gamma"]\nheldout = []\n')
    return root


def carry_script(path: Path) -> str:
    """A: a rule that fixes alpha only (shaped on it). B: a memory note that fixes alpha and
    gamma alike. The base fails alpha and gamma, passes beta."""
    note = action("change", edit={"op": "write_file", "path": "memory/LONG_TERM.md",
                                  "content": f"{CARRIES}\n"},
                  **{**MANIFEST, "component": "memory"})
    return write_script(path, [
        evolve_rule([change(ALPHA, ["write-alpha"]), note, done()]),
        solve_rule(has=[ALPHA], instruction_has=["alpha"]),
        solve_rule(has=[CARRIES], instruction_has=["alpha"]),
        solve_rule(has=[CARRIES], instruction_has=["gamma"]),
        solve_rule(instruction_has=["beta"]),
    ])


def test_a_change_is_kept_only_where_it_also_helps_validation_tasks(tmp_path: Path, monkeypatch,
                                                                    capsys) -> None:
    from evoharness.evolve.agent import session
    from evoharness.evolve.phases import _library_offers
    from evoharness.traces.sql_tool import SqlTool

    prompts: list[str] = []
    real = session.run_tools_agent

    def recording(model, registry, system, instruction, *args, **kwargs):
        prompts.append(system + instruction)
        return real(model, registry, system, instruction, *args, **kwargs)

    monkeypatch.setattr(session, "run_tools_agent", recording)
    run_dir = make_run(tmp_path / "run", carry_script(tmp_path / "s.yaml"),
                       validation_suite(tmp_path / "suite"))
    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    _, ledger = read_run(run_dir)
    a, b = ledger.manifest(0).changes
    judged = ledger.judgements()
    ja, jb = judged[a.id], judged[b.id]
    assert (ja.outcome, ja.decision) == ("not_carried", "revert")
    assert (jb.outcome, jb.decision) == ("effective", "keep")
    for j in (ja, jb):
        assert j.setup.validation == ["write-gamma"] and j.setup.targets is None
        assert j.verdict.predicted.result == "shown"
    assert (ja.verdict.validation.result, jb.verdict.validation.result) == ("not_shown", "shown")
    assert ja.verdict.validation.wins == 0 < jb.verdict.validation.wins
    # the evolve agent saw gamma nowhere: evidence, prompt, offers, SQL, the scoreboard's reasons
    assert prompts and not any("write-gamma" in p for p in prompts)
    evidence = [p.read_text() for p in run_dir.glob("iterations/*/evidence/**/*.md")]
    assert evidence and not any("write-gamma" in text for text in evidence)
    assert "write-gamma" not in ledger.scoreboard().to_markdown()
    with open_run(run_dir) as run:
        offers = _library_offers(run, 0)
        assert not any("write-gamma" in f"{o.summary} {o.text} {o.tasks}" for o in offers)
        with run.ledger.reading() as store, SqlTool(store, restrict_to_split="train") as sql:
            for table in ("rollouts", "events", "verdicts", "changes", "iterations"):
                text = sql.run(f"SELECT * FROM {table}", max_rows=10_000).text()
                assert "write-gamma" not in text, table
            gamma = sql.run("SELECT count(*) FROM rollouts WHERE split <> 'train'").rows
        assert gamma == [[0]]
        with run.ledger.reading() as store:
            splits = dict(store.con.execute(
                "SELECT split, count(*) FROM rollouts WHERE task_id = 'write-gamma' "
                "GROUP BY 1").fetchall())
    assert set(splits) == {"validation"} and splits["validation"] > 2  # EVAL's and the trials'
    with pytest.raises(SystemExit):
        main(["manifest", "show", str(run_dir), a.id])
    shown = capsys.readouterr().out
    assert "predicted tasks: shown: " in shown and "validation tasks: not shown: 0 wins" in shown
