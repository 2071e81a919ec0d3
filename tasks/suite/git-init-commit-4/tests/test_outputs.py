from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

from judge import agent_run

REPO = "/app/dotfiles"


def git(*args):
    done = agent_run(["git", "-C", REPO, *args])
    return done.returncode, done.stdout.strip()


def test_repository():
    assert Path(REPO, ".git").is_dir(), "/app/dotfiles is not a git repository (git init)"


def test_one_commit_with_the_message():
    code, count = git("rev-list", "--count", "HEAD")
    assert code == 0 and count == "1", f"expected exactly one commit, found {count!r}"
    _, message = git("log", "-1", "--format=%B")
    assert message == 'Import files', f"the commit message should be 'Import files', found {message!r}"


def test_tracked_files():
    _, files = git("ls-files")
    assert sorted(files.split("\n")) == ['.gitignore', 'README.md', 'frost.txt', 'lumen.txt', 'solar.txt'], f"the commit holds {files.split()}"


def test_nothing_left_to_commit():
    _, status = git("status", "--porcelain")
    assert status == "", f"uncommitted changes left:\n{status}"
