from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

import os

from judge import agent_run


def test_program_runs():
    assert Path('/app/bin/count').is_file(), "/app/bin/count does not exist"
    assert os.access('/app/bin/count', os.X_OK), "/app/bin/count is not executable"
    done = agent_run(['/app/bin/count'])
    assert done.returncode == 0, f"/app/bin/count exited with {done.returncode}"
    assert norm(done.stdout) == norm('1\n2\n3\n4'), f"/app/bin/count printed {done.stdout!r}, expected '1\n2\n3\n4'"
