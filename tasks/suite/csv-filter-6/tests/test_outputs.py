from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'id,genre,note\n15,crime,n95\n16,crime,was-crime\n18,crime,n1\n19,crime,n89\n20,crime,n16\n'
    found = read('/app/crime.csv')
    assert norm(found) == norm(expected), f"/app/crime.csv should hold {expected!r}, found {found!r}"
