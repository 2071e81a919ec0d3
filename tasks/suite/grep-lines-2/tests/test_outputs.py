from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'carol: umber velvet harbor indigo inventory urgent\nnina: meadow solar cloud river search URGENT\ngrace: maple beacon ember raven mailer urgent\nursula: harbor falcon delta tiger reports urgent\nivan: zephyr cloud umber kernel auth urgent\n'
    found = read('/app/urgent_lines.txt')
    assert norm(found) == norm(expected), f"/app/urgent_lines.txt should hold {expected!r}, found {found!r}"
