from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

import os


def test_scripts_executable():
    for path in ['/app/scripts/solar.py', '/app/scripts/kernel.py', '/app/scripts/ember.py']:
        assert Path(path).is_file(), f"{path} is missing"
        assert os.access(path, os.X_OK), f"{path} is not executable"


def test_others_not_executable():
    for path in ['/app/scripts/zephyr.md', '/app/scripts/cloud.py.txt']:
        assert Path(path).is_file(), f"{path} is missing"
        assert not os.access(path, os.X_OK), f"{path} must not be executable"
