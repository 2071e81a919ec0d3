from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'report for cobalt\n1 yara\n2 dave\n3 trent\n4 ursula\n'
    found = read('/app/report.txt')
    assert norm(found) == norm(expected), f"/app/report.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/report.py': "import sys\n\nitems = ['yara', 'dave', 'trent', 'ursula']\nprint('report for', sys.argv[1])\nfor n, item in enumerate(items, 1):\n    print(n, item)\n"}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
