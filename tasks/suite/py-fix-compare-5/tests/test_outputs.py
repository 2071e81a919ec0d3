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

MODULE = "/app/tickets.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((12,), False), ((11,), True), ((3,), True)])
def test_child_price(args, expected):
    [got] = agent_calls(MODULE, [("child_price", args)])
    assert got.get("value") is expected, f"child_price{args} gave {got}, expected {expected}"
