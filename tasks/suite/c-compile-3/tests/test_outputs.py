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
    assert Path('/app/out/sum').is_file(), "/app/out/sum does not exist"
    assert os.access('/app/out/sum', os.X_OK), "/app/out/sum is not executable"
    done = agent_run(['/app/out/sum'])
    assert done.returncode == 0, f"/app/out/sum exited with {done.returncode}"
    assert norm(done.stdout) == norm('79'), f"/app/out/sum printed {done.stdout!r}, expected '79'"
