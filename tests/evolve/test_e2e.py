"""End to end: the whole loop (evolve/loop.py) on the e2e fixture suite, with a scripted code agent
and a scripted evolve agent behind a real Ollama-protocol server on loopback."""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from evolve.cli import app
from evolve.config import RunConfig, StopRules
from evolve.loop import PHASE_ORDER, evolve
from evolve.report.data import collect
from evolve.run import init_run, open_run
from manifests.store import load_manifest, manifest_path
from tests.fixtures.e2e_agents import (
    HARMFUL_RULE, HELPFUL_RULE, MANIFEST, ScriptedAgents, action, change, done,
)
from workspace.repo import SEED_DIR

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]


@pytest.fixture
def serve(monkeypatch: pytest.MonkeyPatch) -> Iterator:
    """Start a server for ScriptedAgents and point OLLAMA_HOST at it."""
    servers = []

    def start(agents: ScriptedAgents) -> ScriptedAgents:
        server = agents.server().__enter__()
        servers.append(server)
        monkeypatch.setenv("OLLAMA_HOST", server.url)
        return agents

    yield start
    for server in servers:
        server.__exit__(None, None, None)


def make_run(tmp_path: Path, iterations: int = 1, **options) -> Path:
    config = RunConfig(run_id="e2e", tasks=SUITE, model="ollama:scripted", k=1, workers=2,
                       rollout_timeout=60, stop=StopRules(iterations=iterations), **options)
    return init_run(tmp_path / "run", config).root


def status(run_dir: Path) -> dict:
    result = CliRunner().invoke(app, ["status", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    return json.loads(result.output)


def phases_of(run_dir: Path) -> dict[int, list[str]]:
    with open_run(run_dir) as run:
        rows = run.store.con.execute(
            "SELECT iteration, phase FROM iterations WHERE run_id = ? ORDER BY iteration",
            [run.run_id]).fetchall()
    found: dict[int, list[str]] = {}
    for iteration, phase in rows:
        found.setdefault(iteration, []).append(phase)
    return {it: sorted(names, key=PHASE_ORDER.index) for it, names in found.items()}


def verdicts(run_dir: Path) -> list[tuple[str, str, dict]]:
    with open_run(run_dir) as run:
        rows = run.store.con.execute(
            "SELECT verdict, decision, detail FROM verdicts WHERE run_id = ? ORDER BY change_id",
            [run.run_id]).fetchall()
    return [(v, d, json.loads(detail)) for v, d, detail in rows]


def test_a_helpful_edit_is_kept_and_the_pass_rate_rises(tmp_path: Path, serve) -> None:
    agents = serve(ScriptedAgents(solves=lambda system: HELPFUL_RULE in system,
                                  evolve_script=[change(HELPFUL_RULE, TRAIN), done()]))
    run_dir = make_run(tmp_path)

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert result.last_iteration == 1
    assert [d for _, d, _ in verdicts(run_dir)] == ["keep"]
    rows = status(run_dir)["iterations"]
    assert [r["pass_rate_train"] for r in rows] == [0.0, 1.0]
    assert rows[0]["kept"] == 1 and rows[0]["reverted"] == 0
    with open_run(run_dir) as run:
        assert HELPFUL_RULE in run.repo.read_file("system_prompt.md.j2", "HEAD")
    assert agents.total("evolve") == 2


def test_b_harmful_edit_is_reverted_to_the_tree_before_it(tmp_path: Path, serve) -> None:
    serve(ScriptedAgents(solves=lambda system: HARMFUL_RULE not in system,
                         evolve_script=[change(HARMFUL_RULE, ["write-alpha"]), done()]))
    run_dir = make_run(tmp_path)
    with open_run(run_dir) as run:
        before = run.repo.tree_id()

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    [(verdict, decision, detail)] = verdicts(run_dir)
    assert (verdict, decision) == ("harmful", "revert"), detail
    with open_run(run_dir) as run:
        assert run.repo.tree_id() == before
        assert run.repo.log()[0].summary.startswith("Revert")
    rows = status(run_dir)["iterations"]
    assert [r["pass_rate_train"] for r in rows] == [1.0, 0.0]
    assert rows[0]["reverted"] == 1


def test_c_invalid_manifest_records_no_change_and_the_loop_goes_on(tmp_path: Path, serve) -> None:
    bad = change(HELPFUL_RULE, ["no-such-task"])
    agents = serve(ScriptedAgents(solves=lambda system: False,
                                  evolve_script=[bad, bad, bad, done()]))
    run_dir = make_run(tmp_path, iterations=2)

    result = evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    assert result.last_iteration == 2
    with open_run(run_dir) as run:
        manifest = load_manifest(manifest_path(run_dir, 0), run.train_ids)
        assert run.repo.log()[0].summary == run.repo.log()[-1].summary  # only the seed commit
    assert manifest.changes == [] and "invalid manifest" in manifest.no_change_reason
    assert "no-such-task" in manifest.no_change_reason
    done_phases = phases_of(run_dir)
    assert done_phases[0] == done_phases[1] == list(PHASE_ORDER)
    assert done_phases[2] == ["EVAL", "INGEST", "ATTRIBUTE", "REVERT", "DISTILL"]
    assert agents.total("evolve") == 2 * 3  # two sessions of three refused calls each, no done


def test_a_placebo_edit_is_labelled_and_reverted(tmp_path: Path, serve) -> None:
    """A comment-only edit predicting a fix changes nothing the agent meets: it must not be kept."""
    seed = (SEED_DIR / "harness.yaml").read_text()
    placebo = action("change", edit={"op": "write_file", "path": "harness.yaml",
                                     "content": seed + "# the agent should check its work\n"},
                     **MANIFEST)
    serve(ScriptedAgents(solves=lambda system: False, evolve_script=[placebo, done()]))
    run_dir = make_run(tmp_path)

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    [(verdict, decision, detail)] = verdicts(run_dir)
    assert decision == "revert" and detail["placebo"] is True, (verdict, detail)
    assert collect(run_dir).summary()["placebos"] == {"n": 1, "kept": 0}  # the false-accept rate


def test_a_rule_the_agent_reads_is_no_placebo(tmp_path: Path, serve) -> None:
    serve(ScriptedAgents(solves=lambda system: False,
                         evolve_script=[change(HELPFUL_RULE, TRAIN), done()]))
    run_dir = make_run(tmp_path)

    evolve(run_dir, iterations=None, resume=False, say=lambda _: None)

    [(_, decision, detail)] = verdicts(run_dir)
    assert decision == "revert" and "placebo" not in detail
