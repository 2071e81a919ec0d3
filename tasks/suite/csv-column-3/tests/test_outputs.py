from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'nina0@example.com\nnina1@example.com\ndave2@example.com\nivan3@example.com\nheidi4@example.com\ndave5@example.com\nheidi6@example.com\npeggy7@example.com\ngrace8@example.com\n'
    found = read('/app/emails.txt')
    assert norm(found) == norm(expected), f"/app/emails.txt should hold {expected!r}, found {found!r}"
