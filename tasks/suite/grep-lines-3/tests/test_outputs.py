from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'mallory: stone solar orbit indigo checkout\nnina: quartz tiger harbor pixel catalog\nquinn: beacon cloud river cobalt search\npeggy: garnet river anchor stone checkout\nsybil: cobalt river raven umber search\nivan: anchor frost pixel maple gateway\nyara: meadow velvet willow kernel auth\nivan: quartz orbit frost maple auth\nerin: pixel solar stone lumen billing\ncarol: pixel willow raven kernel checkout\n'
    found = read('/app/fixme_lines.txt')
    assert norm(found) == norm(expected), f"/app/fixme_lines.txt should hold {expected!r}, found {found!r}"
