"""Choosing where rollouts run: run.yaml's `executor` and `ray_address`, set by `init` and
overridden for one process by `run`/`evolve --executor` (validated like run.yaml)."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from evoharness.evolve.cli import main
from evoharness.evolve.config import load_config
from tests.fixtures.e2e_agents import HELPFUL_RULE, solve_rule, write_script
from evoharness.traces.store import TraceStore

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"


def cli(*args: str) -> int:
    """The exit code of `evoharness ARGS` (the real entry point: EvoErrors become exit 2)."""
    try:
        main(list(args))
    except SystemExit as ended:
        return ended.code
    return 0


def init(run_dir: Path, *options: str, model: str = "scripted:run-line") -> int:
    return cli("init", str(run_dir), "--tasks", str(SUITE), "--model", model, "-k", "1", *options)


def test_init_records_the_executor_and_the_address(tmp_path: Path) -> None:
    assert init(tmp_path / "run", "--executor", "ray", "--ray-address", "auto") == 0
    assert init(tmp_path / "default") == 0

    assert (load_config(tmp_path / "run")[1].executor, load_config(tmp_path / "run")[1].ray_address
            ) == ("ray", "auto")
    assert load_config(tmp_path / "default")[1].executor == "local"


def test_an_unknown_executor_names_the_field(tmp_path: Path, capsys) -> None:
    assert init(tmp_path / "run", "--executor", "kubernetes") == 2
    error = capsys.readouterr().err
    assert "executor" in error and "kubernetes" in error and "'local' or 'ray'" in error


@pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")
def test_run_executor_overrides_run_yaml_for_that_process_only(tmp_path: Path) -> None:
    run_dir = tmp_path / "run"
    model = write_script(tmp_path / "agents.yaml", [solve_rule(has=[HELPFUL_RULE])])
    assert init(run_dir, "--executor", "ray", "--ray-address", "127.0.0.1:1", "--iterations", "0",
                model=model) == 0
    before = yaml.safe_load((run_dir / "run.yaml").read_text())
    assert cli("run", str(run_dir), "--executor", "kubernetes") == 2  # checked like run.yaml
    assert cli("run", str(run_dir), "--executor", "local") == 0  # ray would be refused

    with TraceStore(run_dir / "traces.duckdb", read_only=True) as store:
        outcomes = store.con.execute("SELECT DISTINCT outcome FROM rollouts").fetchall()
    assert outcomes == [("fail",)]
    assert yaml.safe_load((run_dir / "run.yaml").read_text()) == before
