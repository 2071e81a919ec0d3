from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '1. lumen solar pixel\n2. kernel meadow ember\n3. anchor raven falcon\n4. indigo pixel zephyr\n5. cobalt lumen tiger\n6. zephyr cobalt anchor\n'
    found = read('/app/head_journal.txt')
    assert norm(found) == norm(expected), f"/app/head_journal.txt should hold {expected!r}, found {found!r}"
