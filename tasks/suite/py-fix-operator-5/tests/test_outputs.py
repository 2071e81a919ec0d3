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

MODULE = "/app/clock.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((2, 15), 135), ((0, 45), 45), ((1, 0), 60)])
def test_to_minutes(args, expected):
    [got] = agent_calls(MODULE, [("to_minutes", args)])
    assert got.get("value") == expected, f"to_minutes{args} gave {got}, expected {expected}"


def test_rest_unchanged():
    [got] = agent_calls(MODULE, [("describe", ())])
    assert got.get("value") == "clock helpers"
