from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '[server]\nhost = 0.0.0.0\nport = 8824\nworkers = 14\n\n[metrics]\nport = 8825\n'
    found = read('/app/app.ini')
    assert norm(found) == norm(expected), f"/app/app.ini should hold {expected!r}, found {found!r}"
