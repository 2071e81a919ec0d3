from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '12. stone frost quartz\n13. jasper velvet quartz\n14. tiger indigo willow\n15. zephyr kernel cobalt\n'
    found = read('/app/tail_history.txt')
    assert norm(found) == norm(expected), f"/app/tail_history.txt should hold {expected!r}, found {found!r}"
