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

MODULE = "/app/shipping.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [((50,), True), ((49.99,), False), ((80,), True)])
def test_free_shipping(args, expected):
    [got] = agent_calls(MODULE, [("free_shipping", args)])
    assert got.get("value") is expected, f"free_shipping{args} gave {got}, expected {expected}"
