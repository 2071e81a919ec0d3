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

MODULE = "/app/geometry.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((3, 4), 12), ((5, 5), 25), ((1, 7), 7)])
def test_area(args, expected):
    [got] = agent_calls(MODULE, [("area", args)])
    assert got.get("value") == expected, f"area{args} gave {got}, expected {expected}"


def test_rest_unchanged():
    [got] = agent_calls(MODULE, [("describe", ())])
    assert got.get("value") == "geometry helpers"
