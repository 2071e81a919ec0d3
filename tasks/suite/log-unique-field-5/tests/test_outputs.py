from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

import re


def test_distinct_sorted():
    found = read('/app/users.txt').split()
    expected = ['nina', 'peggy', 'quinn', 'ursula', 'victor']
    assert len(found) == len(set(found)), f"/app/users.txt lists a value more than once: {found}"
    assert set(found) == set(expected), f"/app/users.txt should list {expected}, found {found}"
    loose = sorted(found, key=lambda v: (re.sub("[^0-9A-Za-z]", "", v).lower(), v))
    assert found in (expected, loose), f"/app/users.txt is not sorted: {found}"
