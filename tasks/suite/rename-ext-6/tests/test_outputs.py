from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_folder():
    root = Path('/app/posts')
    assert root.is_dir(), f"{root} does not exist (or is not a folder)"
    found = sorted(str(p.relative_to(root)) for p in root.rglob("*") if p.is_file())
    expected = {'velvet.md': 'velvet 36\n', 'ember.md': 'ember 59\n', 'river.md': 'river 65\n', 'cobalt.log': 'keep this name\n', 'umber.markdown.bak': 'not renamed: ends in .bak\n'}
    assert found == sorted(expected), f"{root} should hold {sorted(expected)}, found {found}"
    for rel, text in expected.items():
        assert (root / rel).read_text() == text, f"{root / rel} has the wrong content"
