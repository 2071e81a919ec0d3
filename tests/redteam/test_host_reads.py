"""What the host reads from a harness or a task is opened without following links, and what a link
points at is never quoted (issue 21, item 4). Each attack puts a link to a root-only file (or a
FIFO) where the host reads, and runs the CLI as a user would: `harness check`, `tasks check`.
On main the link was followed and its target quoted in the error (or the read blocked)."""
from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from tests.faults.conftest import FIXTURE_TASKS, evoharness
from tests.redteam.backends import container_home, sandbox_factory
from evoharness.workspace.repo import SEED_DIR

__all__ = ["container_home", "sandbox_factory"]  # the fixtures, used by name
SECRET = "evo-host-secret-4c1d"  # a string only the root-only file holds
LINKED = "symlinks and special files are not allowed"
# A FIFO nobody writes would block a reader that follows it or opens it blocking: on main the
# command hung until this timeout.
HANG = 60


def root_only(tmp_path: Path, text: str, name: str = "root-only") -> Path:
    """A file (or, with '/' in `name`, a file in a folder) only root may read, holding SECRET."""
    path = tmp_path / "host" / name
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text.replace("SECRET", SECRET))
    path.chmod(0o600)
    return path


def link(path: Path, target: Path) -> None:
    if path.is_dir():
        shutil.rmtree(path)
    else:
        path.unlink(missing_ok=True)
    path.symlink_to(target)


def refused_quietly(*args: str | Path, needle: str) -> str:
    done = evoharness(*args, timeout=HANG)
    shown = done.stdout + done.stderr
    assert done.returncode == 2, shown
    assert "Traceback" not in shown and SECRET not in shown, shown
    assert needle in done.stderr, done.stderr
    return done.stderr


# Each: (path in the seed harness, what the root-only target holds, whether it is a folder). Each
# target's content is something validation would quote: a value of the wrong type, a file name.
HARNESS_LINKS = {
    "harness.yaml": ("harness.yaml", "name: [SECRET]\n", "file"),
    "a tool's YAML": ("tools/shell.yaml", "name: shell\ndescription: d\nparameters: SECRET\n",
                      "file"),
    "the tools folder": ("tools", "x = 1\n", "folder"),
    "the memory file": ("memory/LONG_TERM.md", "SECRET\n", "file"),
}


@pytest.mark.parametrize("how", list(HARNESS_LINKS))
def test_harness_check_never_follows_a_link(tmp_path: Path, how: str) -> None:
    rel, text, kind = HARNESS_LINKS[how]
    harness = Path(shutil.copytree(SEED_DIR, tmp_path / "harness"))
    target = root_only(tmp_path, text, f"{SECRET}/{SECRET}.py" if kind == "folder" else "t")
    link(harness / rel, target.parent if kind == "folder" else target)
    stderr = refused_quietly("harness", "check", harness, needle=LINKED)
    assert f"{rel}: (file): {LINKED}" in stderr


def test_harness_check_refuses_a_fifo_without_blocking(tmp_path: Path) -> None:
    harness = Path(shutil.copytree(SEED_DIR, tmp_path / "harness"))
    (harness / "memory" / "LONG_TERM.md").unlink()
    os.mkfifo(harness / "memory" / "LONG_TERM.md")
    refused_quietly("harness", "check", harness, needle=f"memory/LONG_TERM.md: (file): {LINKED}")


# A task's files the host reads, each a link to a root-only file whose content the error quoted.
TASK_LINKS = {
    "task.toml": ("task.toml", '[agent]\ntimeout_sec = "SECRET"\n'),
    "instruction.md": ("instruction.md", "Do SECRET.\n"),
    "the Dockerfile": ("environment/Dockerfile", "FROM x\nWORKDIR /SECRET\n"),
}


@pytest.mark.parametrize("environment", ["host", "container"])
@pytest.mark.parametrize("how", list(TASK_LINKS))
def test_tasks_check_never_follows_a_link(tmp_path: Path, how: str, environment: str) -> None:
    rel, text = TASK_LINKS[how]
    task = Path(shutil.copytree(FIXTURE_TASKS / "hello-world", tmp_path / "task"))
    link(task / rel, root_only(tmp_path, text))
    stderr = refused_quietly("tasks", "check", task, "--json", "--environment", environment,
                             needle="is a symbolic link")
    assert f"{task / rel}: (file): is a symbolic link; links are never followed" in stderr


def test_a_suite_toml_link_is_refused_unread(tmp_path: Path) -> None:
    suite = Path(shutil.copytree(FIXTURE_TASKS, tmp_path / "suite"))
    link(suite / "suite.toml", root_only(tmp_path, '[split]\ntrain = "SECRET"\n'))
    for args in (["tasks", "check", suite], ["init", tmp_path / "run", "--tasks", suite]):
        refused_quietly(*args, needle="suite.toml: (file): is a symbolic link")


def test_an_instruction_fifo_is_refused_without_blocking(tmp_path: Path) -> None:
    task = Path(shutil.copytree(FIXTURE_TASKS / "hello-world", tmp_path / "task"))
    (task / "instruction.md").unlink()
    os.mkfifo(task / "instruction.md")
    refused_quietly("tasks", "check", task, needle="instruction.md: (file): is not a regular file")


def test_an_installed_suites_hidden_tests_are_not_readable_in_a_sandbox(
        tmp_path: Path, monkeypatch, sandbox_factory, request) -> None:
    """A non-editable install puts the built-in suite (each task's tests/ and solution/) into
    site-packages, which both sandboxes mount for the harness's Python."""
    from evoharness.tasks.sandbox.host_python import host_python, inside
    from tests.redteam.verifier_rollout import attack, user_task

    prefix = tmp_path / "venv"  # a virtual environment with evoharness installed into it
    site = prefix / "lib" / "python3.11" / "site-packages"
    secret = site / "evoharness" / "tasks" / "suite" / "count-lines" / "tests" / "expected.txt"
    secret.parent.mkdir(parents=True)
    secret.write_text(SECRET)
    prefix.chmod(0o755)
    task = user_task(tmp_path, test_sh="#!/bin/bash\necho 0 > /logs/verifier/reward.txt\n")
    if request.node.callspec.params["sandbox_factory"] == "container":  # where it is mounted
        site, secret = Path(inside(site)), Path(inside(secret))
    monkeypatch.setattr("sys.prefix", str(prefix))
    host_python.cache_clear()
    try:
        _, [out] = attack(tmp_path, task, f"ls {site}/evoharness/tasks; cat {secret}",
                          factory=sandbox_factory)
    finally:
        monkeypatch.undo()
        host_python.cache_clear()
    assert SECRET not in out and "suite" in out, out
