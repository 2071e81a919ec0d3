from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

import pytest

from judge import agent_calls

MODULE = "/app/grades.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((45, 50), 90), ((1, 3), 33), ((7, 7), 100)])
def test_percent(args, expected):
    [got] = agent_calls(MODULE, [("percent", args)])
    assert got.get("value") == expected, f"percent{args} gave {got}, expected {expected}"


def test_rest_unchanged():
    [got] = agent_calls(MODULE, [("describe", ())])
    assert got.get("value") == "grades helpers"
