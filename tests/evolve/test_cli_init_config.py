"""`evoharness init --config FILE`: a run.yaml to start from, the options given on the command
line override it (a default does not), and a bad file or field is one line naming the file, the
field and the value (exit 2), before any run directory exists."""
from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from evoharness.evolve.cli import main
from evoharness.evolve.run import open_run
from tests.fixtures.suites import write_suite


def _init(run_dir: Path, *args: str) -> dict:
    with pytest.raises(SystemExit) as exited:
        main(["init", str(run_dir), *args])
    assert exited.value.code == 0
    return yaml.safe_load((run_dir / "run.yaml").read_text())


def _refused(run_dir: Path, args: list[str], capsys) -> str:
    with pytest.raises(SystemExit) as exited:
        main(["init", str(run_dir), *args])
    assert exited.value.code == 2
    assert not run_dir.exists()
    said = capsys.readouterr().err.strip()
    assert "\n" not in said and "validation error" not in said
    return said.removeprefix("error: ")


@pytest.fixture
def config(tmp_path) -> Path:
    write_suite(tmp_path / "suite", ["alpha", "beta"], ["gamma"])
    path = tmp_path / "start.yaml"
    path.write_text(yaml.safe_dump({
        "run_id": "an-earlier-run", "tasks": "suite", "model": "scripted:done", "k": 3,
        "workers": 1, "stop": {"iterations": 7, "patience": 2}, "exam": {"k": 2},
        "max_changes": 1}))
    return path


def test_the_file_is_the_start_and_its_relative_paths_are_from_its_folder(tmp_path, config):
    made = _init(tmp_path / "night", "--config", str(config))
    assert made["run_id"] == "night"  # the new run's own id, not the file's
    assert made["tasks"] == str((tmp_path / "suite").resolve())
    assert (made["model"], made["k"], made["workers"], made["max_changes"]) == (
        "scripted:done", 3, 1, 1)
    assert made["stop"] == {"iterations": 7, "patience": 2} and made["exam"]["k"] == 2
    with open_run(tmp_path / "night") as run:
        assert run.train_ids == ["write-alpha", "write-beta"] and run.heldout_ids == ["write-gamma"]


def test_options_given_override_the_file_and_defaults_do_not(tmp_path, config):
    made = _init(tmp_path / "night", "--config", str(config), "-k", "5", "--iterations", "1",
                 "--exam-k", "6", "--workers", "2")
    assert (made["k"], made["workers"], made["max_changes"]) == (5, 2, 1)
    assert made["stop"] == {"iterations": 1, "patience": 2}  # a section merged, not replaced
    assert made["exam"]["k"] == 6


def test_a_run_yaml_from_an_earlier_run_starts_a_new_one(tmp_path, config):
    _init(tmp_path / "first", "--config", str(config), "--heldout", "write-beta")
    made = _init(tmp_path / "second", "--config", str(tmp_path / "first" / "run.yaml"))
    first = yaml.safe_load((tmp_path / "first" / "run.yaml").read_text())
    assert made == {**first, "run_id": "second"}  # its split too


@pytest.mark.parametrize("text, said", [
    ("tasks: suite\nk: 0\n", "k: Input should be greater than or equal to 1 (got 0)"),
    ("tasks: suite\nkk: 3\n", "kk: is not a known field (got 3)"),
    ("tasks: suite\nexam: {baseline: best}\n", "exam.baseline: use best-of"),
    ("tasks: [suite\n", "invalid YAML at line 2, column 1"),
    ("- suite\n", "(file): must be a mapping of run.yaml's fields"),
])
def test_a_bad_file_or_field_is_one_line_naming_file_field_and_value(tmp_path, capsys, config,
                                                                      text, said):
    config.write_text(text)
    error = _refused(tmp_path / "night", ["--config", str(config)], capsys)
    assert error.startswith(f"{config}: ") and said in error, error


def test_a_missing_config_file_is_named(tmp_path, capsys):
    error = _refused(tmp_path / "night", ["--config", str(tmp_path / "nope.yaml")], capsys)
    assert error.startswith(f"{tmp_path / 'nope.yaml'}: --config: the config file does not exist")
