from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'apple\ncherry\ndate\nfig\ngrape\nkiwi\nlime\nmango\npapaya\npear\n'
    found = read('/app/fruits_sorted.txt')
    assert norm(found) == norm(expected), f"/app/fruits_sorted.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/fruits.txt': 'date\npear\nkiwi\nmango\npapaya\nlime\ngrape\nkiwi\nfig\napple\ncherry\ndate\nfig\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
