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


@pytest.mark.parametrize("args,expected", [(['zoe'], 'Hello, zoe!'), (['grace'], 'Hello, grace!'), (['Mary Ann'], 'Hello, Mary Ann!')])
def test_script(args, expected):
    assert Path('/app/hello.sh').is_file(), "/app/hello.sh does not exist"
    assert os.access('/app/hello.sh', os.X_OK), "/app/hello.sh is not executable (chmod +x /app/hello.sh)"
    done = agent_run(['/app/hello.sh', *args], cwd="/app")
    assert done.returncode == 0, f"/app/hello.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert norm(done.stdout) == norm(expected), f"/app/hello.sh {args} printed {done.stdout!r}, expected {expected!r}"
