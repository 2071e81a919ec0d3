from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/images')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'img_velvet.md': 'velvet 225\n', 'img_river.md': 'river 906\n', 'img_orbit.md': 'orbit 270\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"


def test_moved_away():
    left = [p for p in ['/app/uploads/img_velvet.md', '/app/uploads/img_river.md', '/app/uploads/img_orbit.md'] if Path(p).exists()]
    assert left == [], f"these should be gone: {left}"


def test_inputs_unchanged():
    for path, text in {'/app/uploads/indigo.md': 'indigo keeps\n', '/app/uploads/meadow.md': 'meadow keeps\n', '/app/uploads/IMG_falcon.md': 'stays: upper case is another prefix\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
