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
    assert Path('/app/dist/banner').is_file(), "/app/dist/banner does not exist"
    assert os.access('/app/dist/banner', os.X_OK), "/app/dist/banner is not executable"
    done = agent_run(['/app/dist/banner'])
    assert done.returncode == 0, f"/app/dist/banner exited with {done.returncode}"
    assert norm(done.stdout) == norm('*** alice ***'), f"/app/dist/banner printed {done.stdout!r}, expected '*** alice ***'"
