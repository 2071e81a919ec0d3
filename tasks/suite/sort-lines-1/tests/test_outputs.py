from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'bob\ncarol\ndave\nerin\nfrank\ngrace\nmallory\nnina\nrupert\nzoe\n'
    found = read('/app/names_sorted.txt')
    assert norm(found) == norm(expected), f"/app/names_sorted.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/names.txt': 'carol\nerin\ndave\ngrace\nzoe\nmallory\nnina\nfrank\nbob\nrupert\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
