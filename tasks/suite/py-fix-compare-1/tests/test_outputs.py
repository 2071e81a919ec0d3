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

MODULE = "/app/rules.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((18,), True), ((17,), False), ((40,), True)])
def test_is_adult(args, expected):
    [got] = agent_calls(MODULE, [("is_adult", args)])
    assert got.get("value") is expected, f"is_adult{args} gave {got}, expected {expected}"
