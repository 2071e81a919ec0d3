from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/snapshot')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'lumen.md': 'lumen = 55\n', 'falcon.md': 'falcon = 80\n', 'cloud.md': 'cloud = 8\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"


def test_inputs_unchanged():
    for path, text in {'/app/docs/lumen.md': 'lumen = 55\n', '/app/docs/falcon.md': 'falcon = 80\n', '/app/docs/cloud.md': 'cloud = 8\n', '/app/docs/umber.txt': 'notes about umber\n', '/app/docs/nested/cobalt.md': 'nested\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
