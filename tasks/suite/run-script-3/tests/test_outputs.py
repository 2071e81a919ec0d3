from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'report for delta\n1 grace\n2 heidi\n3 nina\n4 oscar\n'
    found = read('/app/inventory.txt')
    assert norm(found) == norm(expected), f"/app/inventory.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/inventory.py': "import sys\n\nitems = ['grace', 'heidi', 'nina', 'oscar']\nprint('report for', sys.argv[1])\nfor n, item in enumerate(items, 1):\n    print(n, item)\n"}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
