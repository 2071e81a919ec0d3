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
    assert Path('/app/build/greet').is_file(), "/app/build/greet does not exist"
    assert os.access('/app/build/greet', os.X_OK), "/app/build/greet is not executable"
    done = agent_run(['/app/build/greet'])
    assert done.returncode == 0, f"/app/build/greet exited with {done.returncode}"
    assert norm(done.stdout) == norm('Hi heidi'), f"/app/build/greet printed {done.stdout!r}, expected 'Hi heidi'"
