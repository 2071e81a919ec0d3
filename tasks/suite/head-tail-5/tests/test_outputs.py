from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '10. velvet pixel solar\n11. beacon pixel maple\n12. willow umber stone\n13. river orbit beacon\n14. kernel frost velvet\n15. zephyr falcon velvet\n'
    found = read('/app/tail_ranking.txt')
    assert norm(found) == norm(expected), f"/app/tail_ranking.txt should hold {expected!r}, found {found!r}"
