from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '2024-05-10 08:53:20 [ERROR] error one\n'
    found = read('/app/first_error.txt')
    assert norm(found) == norm(expected), f"/app/first_error.txt should hold {expected!r}, found {found!r}"
