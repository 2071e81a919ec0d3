"""`evoharness manifest show`, `log` and `rollback` on a small real run directory."""
from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from evoharness.evolve.cli import app
from evoharness.evolve.config import RunConfig
from evoharness.evolve.run import init_run, open_run
from evoharness.workspace.repo import HarnessRepo

from .builders import change, judge, manifest
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
        run.ledger.record_judgements([
            judge(a, "t1=0/2 t2=2/2", base={"t1": "0"}, change={"t1": "1"}, iteration=1),
            judge(b, "t1=0/2 t2=2/2", iteration=1)])
    return run_dir, HarnessRepo(run_dir / "workspace"), a, b


def test_manifest_show_prints_prediction_against_outcome(tmp_path):
    run, *_ = make_run(tmp_path)
    result = runner.invoke(app, ["manifest", "show", str(run), "A"])
    assert result.exit_code == 0, result.output
    assert "effective -> keep" in result.output
    assert "trial: alone on the base" in result.output
    data = json.loads(runner.invoke(app, ["manifest", "show", str(run), "1", "--json"]).output)
    assert [d["change"]["id"] for d in data] == ["A", "B"]
    verdict = data[0]["judgement"]["verdict"]
    pairs = verdict["rollouts"]["base"]  # every pair a win: base 0/n, change n/n
    assert "fix p=0.70" in result.output and f"0/{pairs}" in result.output
    assert f"{pairs}/{pairs}" in result.output and "fixed" in result.output
    assert {k: verdict["tasks"][0][k] for k in ("task_id", "role", "predicted", "probability",
                                                "history", "base", "change", "result")} == {
        "task_id": "t1", "role": "probe", "predicted": "fix", "probability": 0.7,
        "history": "0/2", "base": f"0/{pairs}", "change": f"{pairs}/{pairs}", "result": "fixed"}
    assert (data[1]["decision"], data[1]["verdict"]) == ("revert", "untestable")  # predicts nothing


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


def test_manifest_show_keeps_a_long_task_name_whole_at_80_columns(tmp_path):
    """Piped or logged (rich's 80 columns), the table's vertical rules had cut
    `fix-inventory-module` to `fix-inventory-mo…`."""
    config = RunConfig(run_id="run1", tasks=SUITE, model="scripted:done")
    run_dir = init_run(tmp_path / "run", config).root
    long_name = "a-task-with-a-rather-long-name"
    with open_run(run_dir, command="test") as run:
        c = change("C", fixes={long_name: 0.3}, commit=edit(run.repo, "C", "f.txt", 1, "C").commit)
        run.ledger.preregister(manifest(1, c))
        run.ledger.record_judgements([judge(c, f"{long_name}=0/2", base={long_name: "0"},
                                            change={long_name: "0"}, iteration=1)])
    result = runner.invoke(app, ["manifest", "show", str(run_dir), "C"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    row = next(line for line in result.output.splitlines() if line.startswith(long_name))
    assert row.split()[1:3] == ["fix", "p=0.30"] and len(row) <= 80
