"""Code changes flow through the loop like rules, through the CLI (`init`, `evolve`, `library
add`), on the scripted model (a TEST DOUBLE: tests/fixtures/e2e_agents.py): the evolve agent asks
for a middleware skeleton and commits a middleware that helps (its trial keeps it), then applies
the starter library's done-guard by its id alone and a harmful middleware of its own (their trials
revert both, with `git revert`); filing the run keeps the middleware with its code and records the
starter's revert in the user's library."""
from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml
from typer.testing import CliRunner

from evoharness.evolve.agent.components import RUNNER
from evoharness.evolve.cli import app
from evoharness.evolve.library.store import Library
from evoharness.evolve.run import read_run
from tests.fixtures.e2e_agents import (
    EVOLVE_MARKER, MANIFEST, action, done, evolve_rule, solve_rule, write_script,
)
from tests.fixtures.suites import write_suite
from evoharness.workspace.repo import HarnessRepo

MARKER = "Run the RUN line of the instruction first."  # the scripted code agent acts on it
HELPFUL = ('def before_model(messages, context):\n'
           f'    messages[0]["content"] += "\\n{MARKER}"\n'
           '    return messages\n' + RUNNER)
HARMFUL = ('def before_tool(call, context):\n'
           '    return {"block": "no shell"} if call["tool"] == "shell" else None\n' + RUNNER)


def middleware_change(name: str, code: str, fixes: list[str], cause: str) -> dict:
    return action("change", **{
        **MANIFEST, "component": "middleware", "root_cause": cause,
        "failure_evidence": [{"task_id": t} for t in fixes],
        "predicted_fixes": [{"task_id": t, "probability": 0.8} for t in fixes],
        "edits": [{"op": "add_file", "path": f"middleware/{name}.py", "content": code},
                  {"op": "register_component", "kind": "middleware", "name": name}]})


def cli(*args: str) -> str:
    result = CliRunner().invoke(app, list(args), terminal_width=200)
    assert result.exit_code == 0, result.output
    return result.output


@pytest.mark.slow  # an evolve with three trials through the CLI: about 21 CPU-seconds
def test_a_middleware_is_kept_or_reverted_by_its_trial_and_filed_like_a_rule(
        tmp_path: Path) -> None:
    suite = write_suite(tmp_path / "suite", ["alpha", "beta", "delta"], ["gamma"])
    skeleton = action("skeleton", kind="middleware", name="marker", hook="before_model")
    applies = action("change", **{  # the starter entry by its id: no edits, no root cause
        **{key: value for key, value in MANIFEST.items() if key not in ("root_cause", "component")},
        "library_entry": "done-guard", "failure_evidence": [{"task_id": "write-delta"}],
        "predicted_fixes": [{"task_id": "write-delta", "probability": 0.5}]})
    model = write_script(tmp_path / "model.yaml", [
        evolve_rule([skeleton, middleware_change(
            "marker", HELPFUL, ["write-alpha", "write-beta"],
            "The agent never runs the instruction's RUN line."), done()],
            instruction_has=["Iteration 0."]),
        evolve_rule([applies, middleware_change(
            "no_shell", HARMFUL, ["write-delta"], "The agent runs commands it should not."),
            done()], instruction_has=["Iteration 1."], also_has=["`done-guard`"]),
        # write-delta fails whatever the harness: the agent calls done at once (done_first)
        {"when": {"system_lacks": [EVOLVE_MARKER], "instruction_has": ["delta"]},
         "replies": [done()]},
        solve_rule(has=[MARKER])])
    run = tmp_path / "run"
    cli("init", str(run), "--tasks", str(suite), "--model", model, "-k", "1",
        "--iterations", "2", "--exam-k", "1")
    cli("evolve", str(run))

    records = {c.entry.root_cause: c for c in read_run(run)[1].changes()}
    kept = records["The agent never runs the instruction's RUN line."]
    starter = records["The agent calls done before the task's output exists, or right after "
                      "writing it without looking at the result."]
    harmful = records["The agent runs commands it should not."]
    assert (kept.decision, kept.verdict) == ("keep", "effective")
    assert [starter.decision, harmful.decision] == ["revert", "revert"]
    # registered after the starter's middleware, yet tried alone: harness.yaml merged as data
    assert harmful.judgement.setup.applied == "alone"
    assert starter.entry.component == "middleware"  # read from the entry's edits
    repo = HarnessRepo(run / "workspace")
    assert repo.commit_info(starter.entry.commit).trailers["Library-Entry"] == "done-guard"
    spec = yaml.safe_load((run / "workspace" / "harness.yaml").read_text())
    assert spec["middleware"] == ["marker"]  # both reverts undid file and registration
    assert sorted(p.name for p in (run / "workspace" / "middleware").iterdir()) == ["marker.py"]
    trace = json.loads((run / "iterations" / "it000" / "evolve_trace.json").read_text())
    shown = next(e["content"] for e in trace if e["kind"] == "tool_result")
    assert "before_model(messages, context)" in shown  # the skeleton: contract and edits

    library = tmp_path / "library"
    filed = cli("library", "add", str(run), "--library", str(library))
    assert "1 entry added, 1 outcome of" in filed and "done-guard: revert" in filed
    entries = {e.id: e for e in Library(library).entries()}
    [made] = [e for e in entries.values() if e.origin == "run"]
    assert made.component == "middleware" and made.edits[0]["content"] == HELPFUL
    assert made.trials[0].decision == "keep"
    guard = entries["done-guard"]
    assert guard.origin == "starter" and [(t.decision, t.applied) for t in guard.trials] == [
        ("revert", True)]
    assert "+++ b/middleware/done_guard.py" in Library(library).diff("done-guard")
    assert "reverted 1x" in cli("library", "list", str(library))
