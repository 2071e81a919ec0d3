from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/archive')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'2023-maple.md': 'maple 603\n', '2023-orbit.md': 'orbit 167\n', '2023-velvet.md': 'velvet 886\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"


def test_moved_away():
    left = [p for p in ['/app/inbox/2023-maple.md', '/app/inbox/2023-orbit.md', '/app/inbox/2023-velvet.md'] if Path(p).exists()]
    assert left == [], f"these should be gone: {left}"


def test_inputs_unchanged():
    for path, text in {'/app/inbox/indigo.md': 'indigo keeps\n', '/app/inbox/meadow.md': 'meadow keeps\n', '/app/inbox/frost-2023-stone.md': 'stays: the prefix is not at the start\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
