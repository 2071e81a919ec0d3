from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'id,city,note\n12,Lima,n75\n13,Lima,n19\n15,Lima,n9\n'
    found = read('/app/Lima.csv')
    assert norm(found) == norm(expected), f"/app/Lima.csv should hold {expected!r}, found {found!r}"
