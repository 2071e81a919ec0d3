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
    found = read('/app/ips.txt').split()
    expected = ['10.0.5.71', '10.0.6.244', '10.0.6.27', '10.0.7.133', '10.0.7.177', '10.0.9.226']
    assert len(found) == len(set(found)), f"/app/ips.txt lists a value more than once: {found}"
    assert set(found) == set(expected), f"/app/ips.txt should list {expected}, found {found}"
    loose = sorted(found, key=lambda v: (re.sub("[^0-9A-Za-z]", "", v).lower(), v))
    assert found in (expected, loose), f"/app/ips.txt is not sorted: {found}"
