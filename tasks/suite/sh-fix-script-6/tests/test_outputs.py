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


@pytest.mark.parametrize("args,expected", [(['INFO', 'yara'], '[INFO] yara'), (['WARN', 'disk  full'], '[WARN] disk  full')])
def test_script(args, expected):
    assert Path('/app/stamp.sh').is_file(), "/app/stamp.sh does not exist"
    assert os.access('/app/stamp.sh', os.X_OK), "/app/stamp.sh is not executable (chmod +x /app/stamp.sh)"
    done = agent_run(['/app/stamp.sh', *args], cwd="/app")
    assert done.returncode == 0, f"/app/stamp.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert norm(done.stdout) == norm(expected), f"/app/stamp.sh {args} printed {done.stdout!r}, expected {expected!r}"
