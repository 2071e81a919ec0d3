from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'Tunis\nSofia\nRiga\nQuito\nPerth\nLima\nDublin\nDakar\nCairo\nBern\n'
    found = read('/app/cities_sorted.txt')
    assert norm(found) == norm(expected), f"/app/cities_sorted.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/cities.txt': 'Tunis\nDakar\nBern\nRiga\nQuito\nLima\nCairo\nPerth\nSofia\nDublin\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
