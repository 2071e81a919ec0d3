"""The leak guard: held-out tasks and test-file text never reach any evidence file."""
from __future__ import annotations

from pathlib import Path

import pytest

from evoharness.debugger.distill import distill
from evoharness.traces.leak import REDACTED, Redactor, assert_no_leak
from evoharness.errors import EvoError
from tests.debugger.conftest import RUN, output, shell, traces  # noqa: F401 (a fixture)

TEST_FILE = '''import subprocess

def test_secret_answer():
    result = subprocess.run(["python", "/app/solve.py"], capture_output=True, text=True)
    assert result.stdout.strip() == "the-hidden-answer-42"
'''
TEST_SH = "#!/bin/bash\npytest /tests/test_outputs.py -rA > /logs/verifier/out.txt; echo 1 > /logs/verifier/reward.txt"


def forbidden() -> list[str]:
    return (TEST_FILE + "\n" + TEST_SH).splitlines()


def leaky_traces(traces) -> None:
    # the verifier echoed the test source; the agent happened to cat the test file content too
    tail = (
        ">       assert result.stdout.strip() == \"the-hidden-answer-42\"\n"
        "E       AssertionError: assert result.stdout.strip() == \"the-hidden-answer-42\"\n"
        "FAILED /tests/test_outputs.py::test_secret_answer"
    )
    traces.rollout("visible", 1, "fail", verifier_tail=tail,
                   events=[shell("cat notes.txt"), output(TEST_FILE), ("error", "E", "see secret-task", {})])
    traces.rollout("visible", 2, "pass", events=[shell("python solve.py")])
    # held-out rows: by split, and by id in hidden_tasks even when stored as train
    traces.rollout("secret-task", 1, "fail", split="heldout", verifier_tail="E  secret failure",
                   events=[("error", "SecretError", "held-out detail", {})])
    traces.rollout("holdout-b", 1, "pass", events=[shell("echo holdout-b-marker")])


def evidence_text(root: Path) -> str:
    return "\n".join(p.name + "\n" + p.read_text() for p in root.rglob("*") if p.is_file())


def test_held_out_and_test_files_never_appear(traces, tmp_path: Path) -> None:
    leaky_traces(traces)
    hidden = {"secret-task", "holdout-b"}
    board = ("| made in | change | predicted fixes | confirmed |\n|---|---|---|---|\n"
             "| 0 | c1 | visible, secret-task | holdout-b |\n")
    index = distill(traces.con, RUN, 1, tmp_path, hidden_tasks=hidden, forbidden=forbidden(),
                    scoreboard=board)
    text = evidence_text(index.root)
    assert set(index.tasks) == {"visible"}
    for needle in ["secret-task", "holdout-b", "SecretError", "held-out detail", "secret failure",
                   "the-hidden-answer-42", "capture_output=True", "def test_secret_answer",
                   "/logs/verifier/reward.txt"]:
        assert needle not in text, needle
    assert "FAILED /tests/test_outputs.py::test_secret_answer" in text  # outcome lines stay
    assert f"| 0 | c1 | visible, {REDACTED} | {REDACTED} |" in text  # hidden ids redacted
    assert_no_leak(index.root, forbidden(), hidden_ids=hidden)


def test_guard_raises_on_leaked_file(tmp_path: Path) -> None:
    (tmp_path / "tasks").mkdir()
    (tmp_path / "tasks" / "x.md").write_text("the agent ran secret-task today")
    with pytest.raises(EvoError, match="secret-task"):
        assert_no_leak(tmp_path, [], hidden_ids={"secret-task"})
    (tmp_path / "tasks" / "x.md").write_text(TEST_FILE)
    with pytest.raises(EvoError, match="x.md"):
        assert_no_leak(tmp_path, forbidden())


def test_guard_matches_ids_as_whole_tokens(tmp_path: Path) -> None:
    (tmp_path / "overview.md").write_text("sort-list passed; import os")
    assert_no_leak(tmp_path, ["import os"], hidden_ids={"sort"})  # neither is a leak
    (tmp_path / "sort.md").write_text("")
    with pytest.raises(EvoError):
        assert_no_leak(tmp_path, [], hidden_ids={"sort"})


def test_redactor() -> None:
    redact = Redactor({"sort"}, ["    assert answer() == 'forty-two'"])
    assert redact("sort and sort-list: assert answer() == 'forty-two'") == (
        f"{REDACTED} and sort-list: {REDACTED}"
    )
