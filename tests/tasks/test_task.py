"""Task and suite loading: Harbor's files into models, and errors naming dir, file and field."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoharness.errors import EvoError, ValidationFailed
from evoharness.tasks.task import dockerfile_workdir, load_suite, load_task

from .conftest import FIXTURES


def _copy(tmp_path: Path, name: str = "hello-world") -> Path:
    return Path(shutil.copytree(FIXTURES / name, tmp_path / name))


def test_loads_harbor_hello_world(hello_task):
    assert hello_task.id == "hello-world"
    assert hello_task.config.verifier.timeout_sec == 60.0
    assert hello_task.config.environment.allow_internet is False
    assert hello_task.config.metadata.tags == ["trivial"]
    assert hello_task.config.model_extra == {}
    assert "hello.txt" in hello_task.instruction
    assert hello_task.workdir == "/app"


def test_bad_field_names_dir_file_and_field(tmp_path):
    task = _copy(tmp_path)
    text = (task / "task.toml").read_text().replace("timeout_sec = 60.0", "timeout_sec = -1")
    (task / "task.toml").write_text(text)
    with pytest.raises(ValidationFailed) as info:
        load_task(task)
    problem = info.value.problems[0]
    assert problem.file == str(task.resolve() / "task.toml")
    assert problem.field == "verifier.timeout_sec"
    assert "greater than 0" in str(problem) and "(got -1)" in str(problem)


def test_unknown_sections_are_tolerated_known_types_checked(tmp_path):
    task = _copy(tmp_path)
    with (task / "task.toml").open("a") as handle:
        handle.write('\n[solution]\nenv = {}\n[task]\nname = "org/hello"\n')
    assert load_task(task).config.model_extra["task"] == {"name": "org/hello"}
    text = (task / "task.toml").read_text().replace("cpus = 1", 'cpus = "many"')
    (task / "task.toml").write_text(text)
    with pytest.raises(ValidationFailed) as info:
        load_task(task)
    assert info.value.problems[0].field == "environment.cpus"


def test_broken_toml_and_missing_files(tmp_path):
    task = _copy(tmp_path)
    (task / "task.toml").write_text("[verifier\n")
    with pytest.raises(ValidationFailed, match="not valid TOML"):
        load_task(task)
    (task / "tests" / "test.sh").unlink()
    (task / "instruction.md").unlink()
    with pytest.raises(ValidationFailed) as info:
        load_task(task)
    files = {p.file for p in info.value.problems}
    assert str(task.resolve() / "tests/test.sh") in files
    assert str(task.resolve() / "instruction.md") in files


def test_workdir_other_than_app_is_refused(tmp_path):
    task = _copy(tmp_path)
    (task / "environment" / "Dockerfile").write_text("FROM ubuntu:24.04\nWORKDIR /srv\n")
    with pytest.raises(ValidationFailed) as info:
        load_task(task)
    assert info.value.problems[0].field == "WORKDIR"


def test_dockerfile_workdir_takes_the_last():
    assert dockerfile_workdir("FROM x\nWORKDIR /tmp\nRUN true\nworkdir /app\n") == "/app"
    assert dockerfile_workdir("FROM x\n") == "/app"


def test_suite_split(tmp_path):
    suite = load_suite(FIXTURES)
    assert [(t.id, s) for t, s in suite.items()] == [("hello-world", "train"),
                                                      ("sum-numbers", "heldout")]
    assert [t.id for t, _ in suite.items("heldout")] == ["sum-numbers"]


def test_suite_task_in_no_split_and_unknown_id(tmp_path):
    root = tmp_path / "suite"
    root.mkdir()
    _copy(root)
    _copy(root, "sum-numbers")
    (root / "suite.toml").write_text('[split]\ntrain = ["hello-world", "ghost"]\nheldout = []\n')
    with pytest.raises(ValidationFailed) as info:
        load_suite(root)
    values = {(p.message, p.value) for p in info.value.problems}
    assert ("task is in no split", "sum-numbers") in values
    assert ("listed task has no directory", "ghost") in values


def test_suite_without_suite_toml(tmp_path):
    with pytest.raises(EvoError, match="suite file is missing"):
        load_suite(tmp_path)


def test_suite_demo_tasks_are_read_and_must_be_train_tasks(tmp_path):
    root = tmp_path / "suite"
    root.mkdir()
    _copy(root)
    _copy(root, "sum-numbers")
    split = '[split]\ntrain = ["hello-world"]\nheldout = ["sum-numbers"]\n'
    (root / "suite.toml").write_text(split + '[demo]\ntasks = ["hello-world"]\n')
    assert load_suite(root).demo == ["hello-world"]
    (root / "suite.toml").write_text(split + '[demo]\ntasks = ["sum-numbers"]\n')
    with pytest.raises(ValidationFailed) as info:
        load_suite(root)
    assert [(p.field, p.value) for p in info.value.problems] == [("demo.tasks", "sum-numbers")]


def test_harbor_verifier_and_agent_fields(tmp_path):
    """environment_mode, artifacts and agent.user are read; a [verifier.environment] table means
    a separate verifier, as in Harbor; artifacts outside /app are refused."""
    task = _copy(tmp_path)
    text = (task / "task.toml").read_text()
    assert load_task(task).config.verifier.environment_mode == "shared"
    separate = 'artifacts = ["/app/out", {source = "/app"}]\n' + text.replace(
        "[agent]\n", '[agent]\nuser = "agent"\n') + '\n[verifier.environment]\ncpus = 1\n'
    (task / "task.toml").write_text(separate)
    config = load_task(task).config
    assert config.verifier.environment_mode == "separate" and config.agent.user == "agent"
    assert config.artifact_paths == ["out", "."]
    (task / "task.toml").write_text(separate.replace("[verifier]\n", '[verifier]\nenvironment_mode = "shared"\n'))
    with pytest.raises(ValidationFailed) as info:
        load_task(task)
    assert info.value.problems[0].field == "verifier"


def test_suite_validation_tasks_are_their_own_split(tmp_path):
    root = tmp_path / "suite"
    root.mkdir()
    for name in ("hello-world", "sum-numbers"):
        _copy(root, name)
    (root / "suite.toml").write_text('[split]\ntrain = ["hello-world"]\nvalidation = '
                                     '["sum-numbers"]\nheldout = []\n')
    suite = load_suite(root)
    assert suite.validation == ["sum-numbers"]
    assert [(t.id, s) for t, s in suite.items()] == [("hello-world", "train"),
                                                      ("sum-numbers", "validation")]
    (root / "suite.toml").write_text('[split]\ntrain = ["hello-world"]\nvalidation = '
                                     '["hello-world", "sum-numbers"]\nheldout = []\n')
    with pytest.raises(ValidationFailed) as info:
        load_suite(root)
    assert [(p.message, p.value) for p in info.value.problems] == [
        ("task is listed twice", "hello-world")]
    (root / "suite.toml").write_text('[split]\ntrain = ["hello-world"]\nvalidation = '
                                     '["sum-numbers"]\nheldout = []\n[demo]\ntasks = '
                                     '["hello-world"]\nvalidation = ["sum-numbers"]\n')
    assert load_suite(root).demo_tasks == ["hello-world", "sum-numbers"]
    (root / "suite.toml").write_text('[split]\ntrain = ["hello-world"]\nvalidation = '
                                     '["sum-numbers"]\nheldout = []\n[demo]\nvalidation = '
                                     '["hello-world"]\n')
    with pytest.raises(ValidationFailed, match="demo validation task is not a validation task"):
        load_suite(root)
