import sys
from pathlib import Path

import pytest

from judge import agent_run

SCRIPT = "/app/greet.py"


@pytest.mark.parametrize("name", ["Ana", "Bob", "Zoe"])
def test_greeting(name):
    assert Path(SCRIPT).is_file(), f"{SCRIPT} is missing"
    done = agent_run([sys.executable, SCRIPT, name])
    assert done.returncode == 0, f"python3 greet.py {name} exited with {done.returncode}: {done.stderr[-500:]}"
    expected = f"Hello, {name}!\n"
    assert done.stdout == expected, f"python3 greet.py {name} printed {done.stdout!r}, expected {expected!r}"
