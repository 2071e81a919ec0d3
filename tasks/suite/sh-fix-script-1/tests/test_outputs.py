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


@pytest.mark.parametrize("args,expected", [(['judy'], 'Welcome, judy!'), (['sybil', 'judy'], 'Welcome, sybil!')])
def test_script(args, expected):
    assert Path('/app/welcome.sh').is_file(), "/app/welcome.sh does not exist"
    assert os.access('/app/welcome.sh', os.X_OK), "/app/welcome.sh is not executable (chmod +x /app/welcome.sh)"
    done = agent_run(['/app/welcome.sh', *args], cwd="/app")
    assert done.returncode == 0, f"/app/welcome.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert norm(done.stdout) == norm(expected), f"/app/welcome.sh {args} printed {done.stdout!r}, expected {expected!r}"
