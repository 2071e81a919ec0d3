from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'id,status,note\n10,pending,n39\n11,pending,n52\n13,pending,n10\n15,pending,n82\n18,pending,n54\n'
    found = read('/app/pending.csv')
    assert norm(found) == norm(expected), f"/app/pending.csv should hold {expected!r}, found {found!r}"
