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

MODULE = "/app/textutil.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [(('hi',), 'HI!'), (('Hello there',), 'HELLO THERE!'), (('',), '!')])
def test_shout(args, expected):
    [got] = agent_calls(MODULE, [("shout", args)])
    assert "value" in got and got["value"] == expected and type(got["value"]) is type(expected), \
        f"shout{args} gave {got}, expected {expected!r}"
