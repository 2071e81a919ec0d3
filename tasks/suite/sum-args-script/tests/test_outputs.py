import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)

import pytest

CASES = [((1, 2, 3), "6"), ((-5, 10), "5"), ((), "0"), ((100,), "100"), ((7, -7, 0, 12), "12"),
         ((1000, 2000, 30000), "33000")]


@pytest.mark.parametrize("args,expected", CASES)
def test_sum(args, expected):
    done = run("/app/sum.sh", *args)
    assert done.returncode == 0, f"sum.sh {' '.join(map(str, args))} exited with {done.returncode}: {done.stderr[-300:]}"
    assert done.stdout.strip() == expected, f"sum.sh {' '.join(map(str, args))} printed {done.stdout!r}, expected {expected}"
