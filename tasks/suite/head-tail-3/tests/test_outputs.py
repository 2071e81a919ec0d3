from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '1. anchor raven indigo\n2. umber frost garnet\n3. umber meadow zephyr\n4. meadow cloud ember\n5. cobalt lumen meadow\n6. pixel raven umber\n'
    found = read('/app/head_queue.txt')
    assert norm(found) == norm(expected), f"/app/head_queue.txt should hold {expected!r}, found {found!r}"
