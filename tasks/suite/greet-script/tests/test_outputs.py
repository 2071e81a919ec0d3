import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


import pytest


@pytest.mark.parametrize("args,expected", [
    (["Ada"], "Hello, Ada!\n"), ([], "Hello, world!\n"), (["Ada Lovelace"], "Hello, Ada Lovelace!\n")])
def test_greeting(args, expected):
    done = run("/app/greet.sh", *args)
    assert done.returncode == 0, f"greet.sh {args} exited with {done.returncode}: {done.stderr}"
    assert done.stdout == expected, f"greet.sh {args} printed {done.stdout!r}, expected {expected!r}"
