from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = '9\n100\n377\n396\n408\n702\n952\n1528\n1578\n2111\n3411\n3537\n'
    found = read('/app/sizes_sorted.txt')
    assert norm(found) == norm(expected), f"/app/sizes_sorted.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/sizes.txt': '9\n100\n2111\n3537\n1578\n396\n1528\n408\n377\n702\n952\n3411\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
