from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '2024-05-10 08:48:13 [WARN] payments: stone beacon id=281\n'
    found = read('/app/first_warn.txt')
    assert norm(found) == norm(expected), f"/app/first_warn.txt should hold {expected!r}, found {found!r}"
