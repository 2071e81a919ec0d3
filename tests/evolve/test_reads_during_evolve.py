"""Every read command works while `evoharness evolve` runs (status, manifest show, log, diff, report,
traces sql, traces export), each as a user runs it, over and over through the run's phases and then at a point
the scripted evolve agent holds the run at; commands that change the run are refused meanwhile."""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
from pathlib import Path

import duckdb
import git
import pytest

from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.ledger import RunPaths
from evoharness.evolve.run import init_run
from evoharness.evolve.status import status
from tests.fixtures.e2e_agents import (
    HELPFUL_RULE, NOTHING_JUDGED, change, done, evolve_rule, solve_rule, wait, write_script,
)

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]
EVOHARNESS = str(Path(sys.executable).parent / "evoharness")
WAIT_SECONDS = 300.0  # a safety net only


def cli(*args: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([EVOHARNESS, *map(str, args)], capture_output=True, text=True,
                          timeout=WAIT_SECONDS, env={**os.environ, "COLUMNS": "1000"})


def reads(run_dir: Path, change_id: str | None, out: Path) -> dict[str, list[str | Path]]:
    commands: dict[str, list[str | Path]] = {
        "status": ["status", run_dir, "--json"],
        "manifest show": ["manifest", "show", run_dir, "--json"],
        "log": ["log", run_dir, "--json"],
        "report": ["report", run_dir, "--out", out],
        "traces sql": ["traces", "sql", run_dir,
                       "SELECT count(*) FROM rollouts WHERE trial_change = ''", "--json"],
        "traces export": ["traces", "export", run_dir, out.with_suffix(".parquet")],
    }
    if change_id:
        commands["diff"] = ["diff", run_dir, change_id, "--json"]
    return commands


class Hammer(threading.Thread):
    """Reads the run's status as fast as it can (in this process, not the evolve's) until
    `until()` holds, so reads land on every kind of write the loop makes."""

    def __init__(self, run_dir: Path, until) -> None:
        super().__init__(daemon=True)
        self.run_dir, self.until = run_dir, until
        self.reads, self.errors = 0, []

    def run(self) -> None:
        while not self.until():
            try:
                status(self.run_dir)
                self.reads += 1
            except Exception as error:  # every failure is reported, none ends the loop
                self.errors.append(repr(error))


@pytest.mark.slow
def test_every_read_command_works_while_an_evolve_runs(tmp_path: Path) -> None:
    model = write_script(tmp_path / "agents.yaml", [
        evolve_rule([change(HELPFUL_RULE, TRAIN), done()], also_has=[NOTHING_JUDGED]),
        evolve_rule([wait(done())]),  # the second session holds the run in EVOLVE
        solve_rule(has=[HELPFUL_RULE]),
    ], latency_s=0.02)
    config = RunConfig(run_id="busy", tasks=SUITE, model=model, k=1, workers=2,
                       rollout_timeout=600, stop=StopRules(iterations=2))
    run_dir = init_run(tmp_path / "run", config).root
    held = RunPaths(root=run_dir).phase(1, "DISTILL")
    log = (tmp_path / "evolve.log").open("w")
    evolve = subprocess.Popen([EVOHARNESS, "evolve", str(run_dir)], stdout=log,
                              stderr=subprocess.STDOUT, start_new_session=True)
    hammer = Hammer(run_dir, until=held.exists)
    hammer.start()
    try:
        during = 0
        while not held.exists():  # through EVAL, INGEST, ... of iterations 0 and 1
            assert evolve.poll() is None, (tmp_path / "evolve.log").read_text()
            for name, args in reads(run_dir, None, tmp_path / "r.html").items():
                result = cli(*args)
                assert result.returncode == 0, (name, result.stderr)
                during += 1
        hammer.join(timeout=WAIT_SECONDS)
        print(f"{during} read commands and {hammer.reads} status reads while the loop worked")
        assert hammer.errors == [] and hammer.reads > 0
        assert evolve.poll() is None

        answers = {name: cli(*args) for name, args in
                   reads(run_dir, "busy-it000-c1", tmp_path / "held.html").items()}
        for name, result in answers.items():
            assert result.returncode == 0, (name, result.stderr)
        status = json.loads(answers["status"].stdout)
        assert status["live"] and f"evoharness evolve (pid {evolve.pid}" in status["running"]
        assert [r["kept"] for r in status["iterations"]] == [1, 0]
        [shown] = json.loads(answers["manifest show"].stdout)
        assert (shown["change"]["id"], shown["decision"]) == ("busy-it000-c1", "keep")
        logged = {e["change_id"]: e for e in json.loads(answers["log"].stdout)}
        assert logged["busy-it000-c1"]["verdict"] == shown["verdict"] == "effective"
        assert json.loads(answers["diff"].stdout)["decision"] == "keep"
        assert 'id="change-busy-it000-c1"' in (tmp_path / "held.html").read_text()
        assert json.loads(answers["traces sql"].stdout)["rows"] == [[3 * 2 + 3]]
        exported = tmp_path / "held.parquet" / "rollouts.parquet"
        assert str(exported) in answers["traces export"].stdout.splitlines()
        with duckdb.connect() as con:
            assert con.execute(f"SELECT count(*) FROM '{exported}' WHERE trial_change = ''"
                               ).fetchall() == [(3 * 2 + 3,)]

        head = git.Repo(run_dir / "workspace").head.commit.hexsha
        for refused in (cli("rollback", run_dir, head, "--reason", "during evolve"),
                        cli("traces", "rebuild", run_dir)):
            assert refused.returncode == 2, refused.stdout
            assert "another evoharness process is changing this run" in refused.stderr
            assert f"pid {evolve.pid}" in refused.stderr
        assert git.Repo(run_dir / "workspace").head.commit.hexsha == head  # nothing reverted
        assert not list(run_dir.glob("traces.duckdb.*"))  # nothing rebuilt
    finally:
        os.killpg(evolve.pid, signal.SIGKILL)
        evolve.wait()
