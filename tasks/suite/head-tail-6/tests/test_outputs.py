from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'dave,209\ncarol,340\nnina,232\nnina,74\njudy,103\npeggy,184\nerin,391\nquinn,175\nmallory,271\nquinn,427\nquinn,343\ndave,122\nwendy,10\nbob,105\ndave,422\n'
    found = read('/app/skip_readings.txt')
    assert norm(found) == norm(expected), f"/app/skip_readings.txt should hold {expected!r}, found {found!r}"
