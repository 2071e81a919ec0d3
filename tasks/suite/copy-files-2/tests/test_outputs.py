from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/keep')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'meadow.csv': 'meadow = 11\n', 'orbit.csv': 'orbit = 53\n', 'anchor.csv': 'anchor = 33\n', 'river old.csv': 'river = 0\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"


def test_inputs_unchanged():
    for path, text in {'/app/data/meadow.csv': 'meadow = 11\n', '/app/data/orbit.csv': 'orbit = 53\n', '/app/data/anchor.csv': 'anchor = 33\n', '/app/data/jasper.txt': 'notes about jasper\n', '/app/data/river old.csv': 'river = 0\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
