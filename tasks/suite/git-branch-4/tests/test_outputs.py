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
    code, parent = git("rev-parse", "refs/heads/experiment~1")
    assert code == 0 and parent == '1b1523ac0d180d0f3bd82ddb9d9ae06cfe14ef44', "experiment needs exactly one commit on top of main"
    _, message = git("log", "-1", "--format=%B", "refs/heads/experiment")
    assert message == 'Add notes.txt', f"the commit message should be 'Add notes.txt', found {message!r}"


def test_file_on_the_branch():
    done = agent_run(["git", "-C", REPO, "show", "refs/heads/experiment:notes.txt"])
    assert done.returncode == 0 and norm(done.stdout) == norm('lumen by victor\n'), \
        f"notes.txt on experiment should hold 'lumen by victor', found {done.stdout!r}"
    _, changed = git("diff", "--name-only", "main", "refs/heads/experiment")
    assert changed.split() == ['notes.txt'], f"the commit should add just notes.txt: {changed.split()}"
