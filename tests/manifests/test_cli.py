"""`evoharness manifest show`, `log` and `rollback` on a small real run directory."""
from __future__ import annotations

import json

from typer.testing import CliRunner

from evolve.cli import app
from manifests.attribution import attribute, record_verdicts
from manifests.store import save_manifest
from traces.store import TraceStore

from .builders import change, counts, manifest, noise
from .test_revert import edit, seed_repo

runner = CliRunner()


def make_run(tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    repo = seed_repo(run, name="workspace")
    a = change("A", fixes={"t1": 0.7}, commit=edit(repo, "A", "f.txt", 1, "A").commit)
    b = edit(repo, "B", "g.txt", 1, "B")
    m = manifest(1, a, b)
    with TraceStore(run / "traces.duckdb") as store:
        save_manifest(run, m, store.con)
        verdicts = attribute(m.changes, counts("t1=0/2 t2=2/2"), counts("t1=1/2 t2=2/2"), noise())
        record_verdicts(store.con, "run1", 2, verdicts)
    return run, repo, a, b


def test_manifest_show_prints_prediction_against_outcome(tmp_path):
    run, *_ = make_run(tmp_path)
    result = runner.invoke(app, ["manifest", "show", str(run), "A"])
    assert result.exit_code == 0, result.output
    assert "effective -> keep" in result.output
    assert "fix p=0.70" in result.output and "1/2" in result.output and "borderline" in result.output
    data = json.loads(runner.invoke(app, ["manifest", "show", str(run), "1", "--json"]).output)
    assert [d["change"]["id"] for d in data] == ["A", "B"]
    assert data[1]["verdict"]["decision"] == "revert"


def test_log_shows_verdicts_and_rollback_records_a_manual_revert(tmp_path):
    run, repo, a, _ = make_run(tmp_path)
    result = runner.invoke(app, ["rollback", str(run), a.commit[:10], "--reason", "by hand"])
    assert result.exit_code == 0, result.output
    assert repo.read_file("f.txt") == repo.read_file("f.txt", "seed")
    entries = json.loads(runner.invoke(app, ["log", str(run), "--json"]).output)
    assert entries[0]["reverts"] == "A"
    change_a = next(e for e in entries if e["change_id"] == "A")
    assert (change_a["verdict"], change_a["decision"]) == ("manual", "revert")
    assert change_a["revert_commit"] == entries[0]["commit"]
    assert "manual" in runner.invoke(app, ["log", str(run)]).output


def test_unknown_selector_is_a_clear_error(tmp_path):
    run, *_ = make_run(tmp_path)
    result = runner.invoke(app, ["manifest", "show", str(run), "nope"])
    assert result.exit_code != 0 and "no change or iteration matches" in str(result.exception)
