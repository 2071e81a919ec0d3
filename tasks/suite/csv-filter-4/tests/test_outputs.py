from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'id,owner,note\n10,alice,n92\n14,alice,n7\n15,alice,n3\n18,alice,n86\n20,alice,was-alice\n'
    found = read('/app/alice.csv')
    assert norm(found) == norm(expected), f"/app/alice.csv should hold {expected!r}, found {found!r}"
