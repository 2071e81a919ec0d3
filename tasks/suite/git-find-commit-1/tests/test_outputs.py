from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_commit_hash():
    found = read("/app/commit.txt").strip()
    assert found == '6f6da9e1edb31800fefbf9322ab8a373e98f2ff5', f"/app/commit.txt should hold the full hash of the fix, found {found!r}"
