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

MODULE = "/app/numutil.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((4,), True), ((7,), False), ((0,), True), ((-3,), False)])
def test_is_even(args, expected):
    [got] = agent_calls(MODULE, [("is_even", args)])
    assert "value" in got and got["value"] == expected and type(got["value"]) is type(expected), \
        f"is_even{args} gave {got}, expected {expected!r}"
