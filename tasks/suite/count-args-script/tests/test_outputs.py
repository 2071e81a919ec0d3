import os
from pathlib import Path

import pytest

from judge import agent_run

SCRIPT = "/app/nargs.sh"


def run(*args):
    assert Path(SCRIPT).is_file(), f"{SCRIPT} does not exist"
    assert os.access(SCRIPT, os.X_OK), f"{SCRIPT} is not executable (chmod +x {SCRIPT})"
    return agent_run([SCRIPT, *args])


CASES = [(["a", "b", "c"], "3"), ([], "0"), (["one"], "1"), (["a b", "c"], "2"),
         (["hello world"], "1"), (["x", "two words here", "y", "z"], "4"),
         ([str(n) for n in range(12)], "12")]


@pytest.mark.parametrize("args,expected", CASES)
def test_count(args, expected):
    done = run(*args)
    assert done.returncode == 0, f"nargs.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert done.stdout.strip() == expected, f"nargs.sh {args} printed {done.stdout!r}, expected {expected!r}"
