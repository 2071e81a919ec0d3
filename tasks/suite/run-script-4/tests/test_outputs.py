from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_output():
    expected = 'lines: 4\nBern\nDakar\nDublin\nTunis\n'
    found = read('/app/status.txt')
    assert norm(found) == norm(expected), f"/app/status.txt should hold {expected!r}, found {found!r}"


def test_inputs_unchanged():
    for path, text in {'/app/tools/status.sh': '#!/bin/bash\n# reads data.txt from the current folder\necho "lines: $(wc -l < data.txt)"\nsort data.txt\n', '/app/tools/data.txt': 'Bern\nDublin\nTunis\nDakar\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
