import os
from pathlib import Path

import pytest

from judge import agent_run

SCRIPT = "/app/shout.sh"


def run(*args):
    assert Path(SCRIPT).is_file(), f"{SCRIPT} does not exist"
    assert os.access(SCRIPT, os.X_OK), f"{SCRIPT} is not executable (chmod +x {SCRIPT})"
    return agent_run([SCRIPT, *args])


CASES = [("hello", "HELLO"), ("good night", "GOOD NIGHT"), ("Release v2 now", "RELEASE V2 NOW"),
         ("ALREADY", "ALREADY")]


@pytest.mark.parametrize("arg,expected", CASES)
def test_shout(arg, expected):
    done = run(arg)
    assert done.returncode == 0, f"shout.sh {arg!r} exited with {done.returncode}: {done.stderr[-300:]}"
    assert done.stdout.strip() == expected, f"shout.sh {arg!r} printed {done.stdout!r}, expected {expected!r}"
