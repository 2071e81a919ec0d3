"""Bad input on every entry point, through the real CLI: a malformed task.toml, harness.yaml or
run.yaml and bad command-line arguments each give one error naming the file, the field and the
value, exit code 2 and no traceback; with --debug the traceback is shown."""
from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from evoharness.workspace.repo import SEED_DIR

from .conftest import FIXTURE_TASKS, assert_clean_error, edit_config, evoharness, make_run


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    return make_run(tmp_path, "http://127.0.0.1:9")  # never contacted: each case fails first


def suite_with(tmp_path: Path, task_toml: str) -> Path:
    suite = tmp_path / "suite"
    shutil.copytree(FIXTURE_TASKS, suite)
    (suite / "hello-world" / "task.toml").write_text(task_toml)
    return suite


@pytest.mark.parametrize("task_toml, needles", [
    ('version = "1.0"\n[agent]\ntimeout_sec = "soon"\n', ["timeout_sec", "soon"]),
    ('version = "1.0"\n[agent\n', ["TOML"]),
])
def test_malformed_task_toml(tmp_path: Path, task_toml: str, needles: list[str]) -> None:
    result = evoharness("init", tmp_path / "run", "--tasks", suite_with(tmp_path, task_toml))
    assert_clean_error(result, "hello-world/task.toml", *needles)
    assert not (tmp_path / "run" / "run.yaml").exists()


@pytest.mark.parametrize("field, value, needles", [
    ("k", "many", ["k", "many"]),
    ("workers", 0, ["workers", "0"]),
    ("model", "gpt-5", ["model", "gpt-5"]),
    ("stop", {"iterations": -1}, ["stop.iterations", "-1"]),
    ("surprise", True, ["surprise"]),
])
def test_malformed_run_yaml(run_dir: Path, field: str, value: object, needles: list[str]) -> None:
    edit_config(run_dir, **{field: value})
    for verb in ("evolve", "run", "status"):
        assert_clean_error(evoharness(verb, run_dir), "run.yaml", *needles)


def test_run_yaml_that_is_not_yaml(run_dir: Path) -> None:
    (run_dir / "run.yaml").write_text("k: [1, 2\n")
    assert_clean_error(evoharness("evolve", run_dir), "run.yaml", "invalid YAML")


def test_malformed_harness_yaml_in_the_workspace(run_dir: Path) -> None:
    workspace = run_dir / "workspace"
    harness = workspace / "harness.yaml"
    harness.write_text(harness.read_text().replace("max_steps: 20", "max_steps: lots"))
    git = ["git", "-C", str(workspace)]
    subprocess.run([*git, "commit", "-qam", "hand edit"], check=True)
    assert_clean_error(evoharness("evolve", run_dir), "harness.yaml", "max_steps", "lots")
    assert_clean_error(evoharness("harness", "check", workspace), "harness.yaml", "max_steps")


@pytest.mark.parametrize("args, needles", [
    (["-k", "0"], ["k", "0"]),
    (["--workers", "-2"], ["workers", "-2"]),
    (["--subset", "hello-world,no-such-task"], ["task_ids", "no-such-task"]),
    (["--model", "bogus"], ["model", "bogus"]),
    (["--model", "openai:http://x"], ["model", "openai:http://x"]),
    (["--evolve-model", "olama:qwen"], ["evolve_model", "olama:qwen"]),
])
def test_bad_init_arguments(tmp_path: Path, args: list[str], needles: list[str]) -> None:
    result = evoharness("init", tmp_path / "run", "--tasks", FIXTURE_TASKS, *args)
    assert_clean_error(result, "run.yaml", *needles)
    assert not (tmp_path / "run").exists() or not (tmp_path / "run" / "run.yaml").exists()


@pytest.mark.parametrize("verb", ["evolve", "run", "status"])
def test_unknown_run_directory(tmp_path: Path, verb: str) -> None:
    assert_clean_error(evoharness(verb, tmp_path / "nowhere"), "nowhere/run.yaml", "evoharness init")


def test_unknown_task_suite(tmp_path: Path) -> None:
    result = evoharness("init", tmp_path / "run", "--tasks", tmp_path / "no-suite")
    assert_clean_error(result, "no-suite")


def test_debug_shows_the_traceback(tmp_path: Path) -> None:
    result = evoharness("--debug", "evolve", tmp_path / "nowhere")
    assert result.returncode != 0
    assert "Traceback" in result.stderr and "not a run directory" in result.stderr


# Task input no parser may turn into a traceback (issue 21, item 5): each is refused with an error
# naming the file, exit 2, by every command that reads tasks. On main the first two raised
# RecursionError and UnicodeDecodeError (exit 1).
DEEP_ARRAYS = "x = " + "[" * 20_000 + "]" * 20_000 + "\n"
BAD_TASK_FILES = {
    "task.toml with arrays 20,000 deep": ("hello-world/task.toml", DEEP_ARRAYS.encode(),
                                          "nested deeper than 32 levels"),
    "instruction.md not UTF-8": ("hello-world/instruction.md", b"Write caf\xe9.\n",
                                 "not UTF-8 text"),
    "task.toml not UTF-8": ("hello-world/task.toml", b'version = "1\xff"\n', "not UTF-8 text"),
    "task.toml with tables 40 deep": ("hello-world/task.toml",
                                      ("[" + ".".join(["t"] * 40) + "]\nx = 1\n").encode(),
                                      "nested deeper than 32 levels"),
    "task.toml with a 5,000-digit integer": ("hello-world/task.toml", b"x = " + b"9" * 5000,
                                             "invalid TOML value"),
    "a Dockerfile not UTF-8": ("hello-world/environment/Dockerfile", b"FROM x\nWORKDIR /\xff\n",
                               "not UTF-8 text"),
    "suite.toml with arrays 20,000 deep": ("suite.toml", DEEP_ARRAYS.encode(),
                                           "nested deeper than 32 levels"),
    "suite.toml not UTF-8": ("suite.toml", b'[split]\ntrain = ["\xff"]\n', "not UTF-8 text"),
}
TASK_COMMANDS = {
    "tasks check on the task": lambda suite, tmp: ["tasks", "check", suite / "hello-world"],
    "tasks check on the suite": lambda suite, tmp: ["tasks", "check", suite],
    "init --tasks": lambda suite, tmp: ["init", tmp / "run", "--tasks", suite],
}


@pytest.mark.parametrize("case, command", [
    (case, command) for case in BAD_TASK_FILES for command in TASK_COMMANDS
    if not (case.startswith("suite.toml") and command == "tasks check on the task")])
def test_bad_task_files_are_errors_naming_the_file(tmp_path: Path, case: str, command: str):
    rel, data, needle = BAD_TASK_FILES[case]
    suite = tmp_path / "suite"
    shutil.copytree(FIXTURE_TASKS, suite)
    (suite / rel).write_bytes(data)
    result = evoharness(*TASK_COMMANDS[command](suite, tmp_path))
    assert_clean_error(result, str(suite / rel), needle)


BAD_HARNESS_FILES = {
    "harness.yaml not UTF-8": ("harness.yaml", b"name: caf\xe9\n", "not UTF-8 text"),
    "a skill's SKILL.md not UTF-8": ("skills/s/SKILL.md", b"---\nname: s\ndescription: \xff\n---\n",
                                     "not UTF-8 text"),
    "harness.yaml with a 5,000-digit integer": ("harness.yaml", b"x: " + b"9" * 5000,
                                                "invalid YAML value"),
}


@pytest.mark.parametrize("case", list(BAD_HARNESS_FILES))
def test_bad_harness_files_are_errors_naming_the_file(tmp_path: Path, case: str) -> None:
    rel, data, needle = BAD_HARNESS_FILES[case]
    harness = Path(shutil.copytree(SEED_DIR, tmp_path / "harness"))
    if rel.startswith("skills/"):
        spec = harness / "harness.yaml"
        spec.write_text(spec.read_text().replace("skills: []", "skills: [s]"))
    (harness / rel).parent.mkdir(parents=True, exist_ok=True)
    (harness / rel).write_bytes(data)
    assert_clean_error(evoharness("harness", "check", harness), rel, needle)
