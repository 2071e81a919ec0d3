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
    assert Path('/app/build/square').is_file(), "/app/build/square does not exist"
    assert os.access('/app/build/square', os.X_OK), "/app/build/square is not executable"
    done = agent_run(['/app/build/square'])
    assert done.returncode == 0, f"/app/build/square exited with {done.returncode}"
    assert norm(done.stdout) == norm('289'), f"/app/build/square printed {done.stdout!r}, expected '289'"
