from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'id,region,note\n11,eu,n47\n12,eu,n33\n14,eu,n46\n15,eu,n25\n17,eu,n50\n'
    found = read('/app/eu.csv')
    assert norm(found) == norm(expected), f"/app/eu.csv should hold {expected!r}, found {found!r}"
