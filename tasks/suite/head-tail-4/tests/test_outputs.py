from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'grace,283\nnina,279\nyara,110\nheidi,305\njudy,1\nbob,463\nyara,492\nquinn,56\nfrank,175\ngrace,22\nalice,191\nheidi,195\noscar,250\nmallory,384\npeggy,138\n'
    found = read('/app/skip_events.txt')
    assert norm(found) == norm(expected), f"/app/skip_events.txt should hold {expected!r}, found {found!r}"
