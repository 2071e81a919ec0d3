from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'carol: cloud indigo falcon jasper checkout deprecated\nyara: maple cobalt falcon cloud checkout deprecated DEPRECATED\nerin: quartz pixel kernel cobalt inventory deprecated\nalice: garnet harbor willow meadow scheduler deprecated\n'
    found = read('/app/deprecated_lines.txt')
    assert norm(found) == norm(expected), f"/app/deprecated_lines.txt should hold {expected!r}, found {found!r}"
