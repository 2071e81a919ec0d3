from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_answer():
    found = read('/app/solar-1.iso.md5').strip()
    assert found == 'e817a5d5c2224255ab3615fde9b0438a', f"/app/solar-1.iso.md5 should hold just 'e817a5d5c2224255ab3615fde9b0438a', found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/solar-1.iso': 'maple 6463\nzephyr 446\ncloud 4996\nvelvet 4122\nlumen 4421\npixel 9810\nlumen 1665\ncloud 5375\nharbor 2107\number 1872\nbeacon 6064\nlumen 7899\ndelta 5954\nmeadow 6680\nriver 7183\ncloud 3658\nzephyr 6377\ndelta 7255\nbeacon 9\nsolar 313\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
