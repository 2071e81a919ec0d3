"""`evoharness tasks check`: the fixture suite is proven; a broken oracle, a task that passes
untouched and invalid input each give the documented exit code."""
from __future__ import annotations

import json
import shutil

import pytest

from evoharness.evolve.cli import main

from .conftest import FIXTURES, needs_bwrap

pytestmark = needs_bwrap


def _exit_code(argv: list[str]) -> int:
    with pytest.raises(SystemExit) as info:
        main(argv)
    return info.value.code


def test_fixture_suite_is_proven(capsys):
    assert _exit_code(["tasks", "check", str(FIXTURES), "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [(r["task_id"], r["split"], r["ok"]) for r in rows] == [
        ("hello-world", "train", True), ("sum-numbers", "heldout", True)]


def test_one_task_folder_shows_the_split_its_suite_gives_it(tmp_path, capsys):
    """A held-out task checked alone is still held out; a task in no suite has no split."""
    assert _exit_code(["tasks", "check", str(FIXTURES / "sum-numbers"), "--json"]) == 0
    assert [(r["task_id"], r["split"]) for r in json.loads(capsys.readouterr().out)] == [
        ("sum-numbers", "heldout")]
    lone = shutil.copytree(FIXTURES / "sum-numbers", tmp_path / "sum-numbers")
    assert _exit_code(["tasks", "check", str(lone), "--json"]) == 0
    assert [r["split"] for r in json.loads(capsys.readouterr().out)] == [None]


def test_broken_oracle_and_trivial_task_exit_1(tmp_path, capsys):
    broken = shutil.copytree(FIXTURES / "hello-world", tmp_path / "broken")
    (broken / "solution" / "solve.sh").write_text("echo 'Hello' > hello.txt\n")
    assert _exit_code(["tasks", "check", str(broken)]) == 1
    out = capsys.readouterr().out
    assert "the oracle did not pass" in out and "FAIL" in out
    trivial = shutil.copytree(FIXTURES / "hello-world", tmp_path / "trivial")
    (trivial / "environment" / "hello.txt").write_text("Hello, world!\n")
    assert _exit_code(["tasks", "check", str(trivial)]) == 1
    assert "already passes" in capsys.readouterr().out


def test_invalid_suite_exits_2(tmp_path, capsys):
    assert _exit_code(["tasks", "check", str(tmp_path)]) == 2
    assert "suite.toml" in capsys.readouterr().err
