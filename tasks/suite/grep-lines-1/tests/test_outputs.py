from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'nina: pixel quartz beacon meadow gateway TODO\ncarol: lumen willow cloud quartz catalog TODO\ngrace: garnet cloud raven stone catalog TODO\nrupert: garnet quartz harbor solar billing TODO\n'
    found = read('/app/todo_lines.txt')
    assert norm(found) == norm(expected), f"/app/todo_lines.txt should hold {expected!r}, found {found!r}"
