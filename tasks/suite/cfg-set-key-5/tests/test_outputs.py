from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'APP_NAME=gateway\nDEBUG=true\nLOG_LEVEL=warn\nDB_PORT=6550\n# DEBUG=false is the production value\n'
    found = read('/app/prod.env')
    assert norm(found) == norm(expected), f"/app/prod.env should hold {expected!r}, found {found!r}"
