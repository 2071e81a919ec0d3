from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_removed():
    left = [p for p in ['/app/docs/jasper.swp', '/app/docs/willow.swp', '/app/docs/quartz/stone.swp'] if Path(p).exists()]
    assert left == [], f"these should be gone: {left}"


def test_inputs_unchanged():
    for path, text in {'/app/docs/raven.txt': 'keep\n', '/app/docs/quartz/tiger.txt': 'keep too\n', '/app/docs/frost.swp.txt': 'keep: ends in .txt, not .swp\n', '/app/docs/meadow.SWP': 'keep: upper case\n'}.items():
        assert Path(path).is_file(), f"{path} must stay where it is"
        assert Path(path).read_text() == text, f"{path} must stay unchanged"
