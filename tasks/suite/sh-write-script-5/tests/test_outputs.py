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


@pytest.mark.parametrize("args,expected", [(['peggy', 'ivan'], '2'), ([], '0'), (['one two'], '1')])
def test_script(args, expected):
    assert Path('/app/count.sh').is_file(), "/app/count.sh does not exist"
    assert os.access('/app/count.sh', os.X_OK), "/app/count.sh is not executable (chmod +x /app/count.sh)"
    done = agent_run(['/app/count.sh', *args], cwd="/app")
    assert done.returncode == 0, f"/app/count.sh {args} exited with {done.returncode}: {done.stderr[-300:]}"
    assert norm(done.stdout) == norm(expected), f"/app/count.sh {args} printed {done.stdout!r}, expected {expected!r}"
