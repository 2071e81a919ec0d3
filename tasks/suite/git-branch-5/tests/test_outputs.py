from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

from judge import agent_run

REPO = "/app/project"


def git(*args):
    done = agent_run(["git", "-C", REPO, *args])
    return done.returncode, done.stdout.strip()


def test_main_unchanged():
    code, head = git("rev-parse", "refs/heads/main")
    assert code == 0 and head == '1b1523ac0d180d0f3bd82ddb9d9ae06cfe14ef44', "main must stay at its old tip"


def test_branch_has_one_commit_on_main():
    code, parent = git("rev-parse", "refs/heads/feature/export~1")
    assert code == 0 and parent == '1b1523ac0d180d0f3bd82ddb9d9ae06cfe14ef44', "feature/export needs exactly one commit on top of main"
    _, message = git("log", "-1", "--format=%B", "refs/heads/feature/export")
    assert message == 'Add export.md', f"the commit message should be 'Add export.md', found {message!r}"


def test_file_on_the_branch():
    done = agent_run(["git", "-C", REPO, "show", "refs/heads/feature/export:export.md"])
    assert done.returncode == 0 and norm(done.stdout) == norm('meadow by rupert\n'), \
        f"export.md on feature/export should hold 'meadow by rupert', found {done.stdout!r}"
    _, changed = git("diff", "--name-only", "main", "refs/heads/feature/export")
    assert changed.split() == ['export.md'], f"the commit should add just export.md: {changed.split()}"
