"""`evoharness init` through the CLI: the default model follows OLLAMA_HOST as the README says,
`--subset demo` takes the suite's demo tasks, and the unsafe flag is recorded for the loop."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evolve.cli import main
from tasks.task import load_suite

SUITE = Path(__file__).resolve().parents[2] / "tasks" / "suite"


def _init(run_dir: Path, *args: str) -> dict:
    with pytest.raises(SystemExit) as exited:
        main(["init", str(run_dir), *args])
    assert exited.value.code == 0
    return yaml.safe_load((run_dir / "run.yaml").read_text())


@pytest.mark.parametrize("host, args, expected", [
    (None, [], "embedded"),
    ("http://127.0.0.1:11434", [], "ollama:qwen2.5-coder:1.5b"),
    ("http://127.0.0.1:11434", ["--model", "embedded-small"], "embedded-small"),
])
def test_default_model_follows_ollama_host(tmp_path, monkeypatch, host, args, expected):
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
    if host:
        monkeypatch.setenv("OLLAMA_HOST", host)
    config = _init(tmp_path / "run", "--subset", "demo", *args)
    assert config["model"] == expected
    assert config.get("evolve_model") is None  # the evolve agent uses the same model


def test_subset_demo_takes_the_suites_demo_tasks(tmp_path):
    config = _init(tmp_path / "run", "--subset", "demo")
    assert config["task_ids"] == load_suite(SUITE).demo
    assert len(config["task_ids"]) == 4


def test_unsafe_flag_is_recorded_for_the_loop(tmp_path):
    assert _init(tmp_path / "safe", "--subset", "demo").get("unsafe_no_sandbox") is False
    config = _init(tmp_path / "unsafe", "--subset", "demo", "--unsafe-no-sandbox")
    assert config["unsafe_no_sandbox"] is True
