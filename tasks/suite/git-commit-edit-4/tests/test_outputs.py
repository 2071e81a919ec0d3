from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")

from judge import agent_run

REPO = Path("/app/project")


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])
    return done.returncode, done.stdout.strip()


def test_cloned():
    assert (REPO / ".git").is_dir(), "/app/project is not a clone of /app/project.bundle"


def test_new_commit_on_the_old_tip():
    code, parent = git("rev-parse", "main~1")
    assert code == 0 and parent == '32816f7d404dcd8c698c81d7182bcf28d46f9e84', "main needs one new commit on top of the old tip"


def test_message():
    _, message = git("log", "-1", "--format=%B", "main")
    assert message == 'Bump to 2.4.0', f"the commit message should be 'Bump to 2.4.0', found {message!r}"


def test_file_in_the_commit():
    done = agent_run(["git", "-C", str(REPO), "show", "main:VERSION"])
    assert done.returncode == 0 and norm(done.stdout) == norm('2.4.0\n'), \
        f"VERSION in the new commit should be '2.4.0\n', found {done.stdout!r}"


def test_only_that_file_changed():
    _, changed = git("diff", "--name-only", "main~1", "main")
    assert changed.split() == ['VERSION'], f"the commit should change just VERSION: {changed.split()}"


def test_clean():
    _, status = git("status", "--porcelain")
    assert status == "", f"uncommitted changes left:\n{status}"
