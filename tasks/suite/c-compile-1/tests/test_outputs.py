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
    assert Path('/app/bin/hello').is_file(), "/app/bin/hello does not exist"
    assert os.access('/app/bin/hello', os.X_OK), "/app/bin/hello is not executable"
    done = agent_run(['/app/bin/hello'])
    assert done.returncode == 0, f"/app/bin/hello exited with {done.returncode}"
    assert norm(done.stdout) == norm('Hello from mallory'), f"/app/bin/hello printed {done.stdout!r}, expected 'Hello from mallory'"
