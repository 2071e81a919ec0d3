from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


import os

import pytest

from judge import agent_run


@pytest.mark.parametrize("args,expected", [(['20', '17'], '37'), (['0', '0'], '0'), (['10', '-3'], '7')])
def test_script(args, expected):
    assert Path('/app/add.sh').is_file(), "/app/add.sh does not exist"
    assert os.access('/app/add.sh', os.X_OK), "/app/add.sh is not executable (chmod +x /app/add.sh)"
    done = agent_run(['/app/add.sh', *args], cwd="/app")
    assert done.returncode == 0, f"/app/add.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert norm(done.stdout) == norm(expected), f"/app/add.sh {args} printed {done.stdout!r}, expected {expected!r}"
