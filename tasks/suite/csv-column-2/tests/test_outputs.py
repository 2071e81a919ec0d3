from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'grape\nmelon\nkiwi\nlime\nplum\nmango\ncherry\nlime\nplum\nmelon\n'
    found = read('/app/items.txt')
    assert norm(found) == norm(expected), f"/app/items.txt should hold {expected!r}, found {found!r}"
