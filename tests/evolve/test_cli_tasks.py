"""`evoharness tasks check` on task folders from no suite, with a container engine that answers
`info` but cannot pull (a fake `podman` on PATH): the task goes to its image by the rule a suite
without `environment = "host"` follows, the user is told why, and what went wrong is one line,
never an engine's error folded into a narrow table column."""
from __future__ import annotations

import shutil
import stat
from pathlib import Path

import pytest

from evoharness.evolve.cli import main
from tests.tasks.conftest import needs_bwrap

TEMPLATE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite" / "write-alpha"
PULL_ERROR = ("Error: initializing source docker://ubuntu:24.04: pinging container registry\n"
              "registry-1.docker.io: Get \"https://registry-1.docker.io/v2/\": dial tcp: "
              "lookup registry-1.docker.io: no such host")


@pytest.fixture
def fake_podman(tmp_path, monkeypatch):
    """A podman whose `info` (and, unless told, `ps`) works and every other command fails as a
    machine without a registry fails."""
    def make(works: tuple[str, ...] = ("info", "ps")) -> None:
        bin_dir = tmp_path / "bin"
        bin_dir.mkdir(exist_ok=True)
        script = bin_dir / "podman"
        cases = "|".join(works)
        script.write_text(f"#!/bin/sh\ncase \"$1\" in {cases}) exit 0;; esac\n"
                          f"cat >&2 <<'END'\n{PULL_ERROR}\nEND\nexit 125\n")
        script.chmod(script.stat().st_mode | stat.S_IXUSR)
        monkeypatch.setenv("PATH", f"{bin_dir}:{__import__('os').environ['PATH']}")
    return make


def _task(root: Path, name: str, *, builds: bool) -> Path:
    task = shutil.copytree(TEMPLATE, root / name)
    if builds:  # a RUN step: `auto` puts the task in its image when an engine works
        dockerfile = task / "environment" / "Dockerfile"
        dockerfile.write_text(dockerfile.read_text() + "RUN true\n")
    return task


def _check(args: list[str]) -> int:
    with pytest.raises(SystemExit) as exited:
        main(["tasks", "check", *args, "--engine", "podman"])
    return exited.value.code


def test_one_task_folder_that_cannot_get_its_image_is_one_line_naming_it(
        tmp_path, capsys, fake_podman):
    fake_podman()
    task = _task(tmp_path / "outside", "write-beta", builds=True)
    assert _check([str(task)]) == 2
    said = capsys.readouterr()
    assert "no suite.toml says where it runs" in said.out and "--environment host" in said.out
    error = said.err.strip()
    assert "\n" not in error and error.startswith(f"error: {task}: environment: ")
    assert "no such host" in error and "--environment host" in error
    assert "┃" not in said.out and "│" not in said.out  # no table of a task that never ran


def test_an_engine_that_fails_is_said_in_one_line(tmp_path, capsys, fake_podman):
    fake_podman(works=("info",))  # its `ps` (the sweep of left containers) fails
    task = _task(tmp_path / "outside", "write-beta", builds=True)
    assert _check([str(task)]) == 2
    error = capsys.readouterr().err.strip()
    assert "\n" not in error and "no such host" in error and "registry-1.docker.io" in error


@needs_bwrap
def test_a_folder_without_suite_toml_is_checked_and_a_long_reason_is_one_line_below_the_table(
        tmp_path, capsys, fake_podman):
    fake_podman()
    folder = tmp_path / "mine"
    _task(folder, "write-alpha", builds=False)  # nothing to build: runs on the host
    _task(folder, "write-beta", builds=True)
    assert _check([str(folder)]) == 1
    out = capsys.readouterr().out
    reason = [line for line in out.splitlines() if line.startswith("write-beta: skipped: ")]
    assert len(reason) == 1 and "no such host" in reason[0]  # whole, on its own line
    rows = [line for line in out.splitlines() if "│" in line]
    assert len(rows) == 2, out  # one row a task: the reason is not folded into the table
    assert "1/2 tasks proven (1 could not run here)" in out


def test_a_folder_with_no_task_and_no_suite_toml_is_refused(tmp_path, capsys):
    assert _check([str(tmp_path)]) == 2
    assert "suite.toml" in capsys.readouterr().err
