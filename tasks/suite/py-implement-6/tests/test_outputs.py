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

MODULE = "/app/wordutil.py"  # run only in a child process (judge.agent_calls), never imported here


@pytest.mark.parametrize("args,expected", [(('one two three',), 3), (('',), 0), ((' spaced   out ',), 2)])
def test_count_words(args, expected):
    [got] = agent_calls(MODULE, [("count_words", args)])
    assert "value" in got and got["value"] == expected and type(got["value"]) is type(expected), \
        f"count_words{args} gave {got}, expected {expected!r}"
