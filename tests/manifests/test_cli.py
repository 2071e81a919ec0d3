"""`evoharness manifest show`, `log` and `rollback` on a small real run directory."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evolve.cli import app
from evolve.config import RunConfig
from evolve.run import init_run, open_run
from manifests.judgement import judge_by_rule
from workspace.repo import HarnessRepo

from .builders import change, counts, manifest, noise
from .test_revert import edit

runner = CliRunner()
SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"


def make_run(tmp_path):
    config = RunConfig(run_id="run1", tasks=SUITE, model="scripted:done")
    run_dir = init_run(tmp_path / "run", config).root
    with open_run(run_dir, command="test") as run:
        a = change("A", fixes={"t1": 0.7}, commit=edit(run.repo, "A", "f.txt", 1, "A").commit)
        b = edit(run.repo, "B", "g.txt", 1, "B")
        m = manifest(1, a, b)
        run.ledger.preregister(m)
        run.ledger.record_judgements(judge_by_rule(
            m.changes, counts("t1=0/2 t2=2/2"), counts("t1=1/2 t2=2/2"), noise(), run_id="run1",
            iteration=2, before_iteration=1))
    return run_dir, HarnessRepo(run_dir / "workspace"), a, b


def test_manifest_show_prints_prediction_against_outcome(tmp_path):
    run, *_ = make_run(tmp_path)
    result = runner.invoke(app, ["manifest", "show", str(run), "A"])
    assert result.exit_code == 0, result.output
    assert "effective -> keep" in result.output
    assert "fix p=0.70" in result.output and "1/2" in result.output and "borderline" in result.output
    data = json.loads(runner.invoke(app, ["manifest", "show", str(run), "1", "--json"]).output)
    assert [d["change"]["id"] for d in data] == ["A", "B"]
    assert data[1]["decision"] == "revert" and data[1]["judgement"]["method"] == "threshold-rule"
    assert data[0]["judgement"]["tasks"][0] == {
        "task_id": "t1", "before": {"passes": 0, "total": 2}, "after": {"passes": 1, "total": 2},
        "cls": "fixed", "predicted": "fix", "probability": 0.7, "borderline": True}


def test_log_shows_verdicts_and_rollback_records_a_manual_revert(tmp_path):
    run, repo, a, _ = make_run(tmp_path)
    result = runner.invoke(app, ["rollback", str(run), a.commit[:10], "--reason", "by hand"])
    assert result.exit_code == 0, result.output
    assert not (run / "workspace" / "f.txt").exists()  # A added it; the seed has none
    entries = json.loads(runner.invoke(app, ["log", str(run), "--json"]).output)
    assert entries[0]["reverts"] == "A"
    change_a = next(e for e in entries if e["change_id"] == "A")
    assert (change_a["verdict"], change_a["decision"]) == ("manual", "revert")
    assert change_a["revert_commit"] == entries[0]["commit"]
    assert "manual" in runner.invoke(app, ["log", str(run)]).output
    shown = json.loads(runner.invoke(app, ["manifest", "show", str(run), "A", "--json"]).output)
    assert shown[0]["revert"]["manual"] and shown[0]["reason"] == "manual rollback: by hand"


def test_unknown_selector_is_a_clear_error(tmp_path):
    run, *_ = make_run(tmp_path)
    result = runner.invoke(app, ["manifest", "show", str(run), "nope"])
    assert result.exit_code != 0 and "no change or iteration matches" in str(result.exception)
