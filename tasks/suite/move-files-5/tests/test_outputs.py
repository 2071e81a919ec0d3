from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/reports')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'report-orbit.txt': 'orbit 114\n', 'report-willow.txt': 'willow 481\n', 'report-garnet.txt': 'garnet 412\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"


def test_moved_away():
    left = [p for p in ['/app/work/report-orbit.txt', '/app/work/report-willow.txt', '/app/work/report-garnet.txt'] if Path(p).exists()]
    assert left == [], f"these should be gone: {left}"


def test_inputs_unchanged():
    for path, text in {'/app/work/indigo.txt': 'indigo keeps\n', '/app/work/ember.txt': 'ember keeps\n', '/app/work/delta-report-raven.txt': 'stays: the prefix is not at the start\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
