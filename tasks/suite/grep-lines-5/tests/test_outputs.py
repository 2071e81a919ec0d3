from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'xavier: frost solar anchor jasper checkout timeout\nalice: umber harbor delta raven gateway timeout\nerin: velvet delta harbor orbit scheduler timeout\nsybil: indigo delta garnet raven catalog TIMEOUT\nnina: delta pixel jasper harbor billing timeout\n'
    found = read('/app/timeout_lines.txt')
    assert norm(found) == norm(expected), f"/app/timeout_lines.txt should hold {expected!r}, found {found!r}"
