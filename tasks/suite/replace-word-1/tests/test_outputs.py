from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'zephyr harbor raven kernel lumen\nstone solar meadow anchor color pixel\nkernel indigo pixel anchor maple\nzephyr umber color garnet ember river\ncloud ember meadow indigo lumen\ncolor raven solar stone velvet tiger\ncobalt solar falcon meadow river color color\njasper frost umber cloud lumen\n'
    found = read('/app/style.txt')
    assert norm(found) == norm(expected), f"/app/style.txt should hold {expected!r}, found {found!r}"
