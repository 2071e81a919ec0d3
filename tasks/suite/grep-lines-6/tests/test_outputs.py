from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'zoe: orbit raven cloud frost gateway\ngrace: orbit velvet raven tiger scheduler\nzoe: umber delta river maple inventory\nvictor: jasper lumen falcon frost inventory\ndave: stone falcon zephyr umber reports\nsybil: garnet delta cobalt quartz payments\noscar: river quartz frost ember search\nivan: solar garnet zephyr quartz gateway\nquinn: lumen beacon kernel ember auth\nvictor: pixel solar anchor cloud inventory\n'
    found = read('/app/refund_lines.txt')
    assert norm(found) == norm(expected), f"/app/refund_lines.txt should hold {expected!r}, found {found!r}"
