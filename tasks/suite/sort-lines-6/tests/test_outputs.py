from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '9\n100\n174\n802\n1126\n1342\n2878\n2888\n3675\n3979\n4306\n4368\n'
    found = read('/app/scores_sorted.txt')
    assert norm(found) == norm(expected), f"/app/scores_sorted.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/scores.txt': '9\n100\n174\n1126\n3675\n802\n4306\n3979\n2878\n4368\n2888\n1342\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
