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
    assert code == 0 and parent == 'cd0f6f786c997247e8bea0ad2e56fb31b410b022', "main needs one new commit on top of the old tip"


def test_message():
    _, message = git("log", "-1", "--format=%B", "main")
    assert message == 'More workers', f"the commit message should be 'More workers', found {message!r}"


def test_file_in_the_commit():
    done = agent_run(["git", "-C", str(REPO), "show", "main:app.conf"])
    assert done.returncode == 0 and norm(done.stdout) == norm('[main]\nname = gateway\nworkers = 4\nother = 2\n'), \
        f"app.conf in the new commit should be '[main]\nname = gateway\nworkers = 4\nother = 2\n', found {done.stdout!r}"


def test_only_that_file_changed():
    _, changed = git("diff", "--name-only", "main~1", "main")
    assert changed.split() == ['app.conf'], f"the commit should change just app.conf: {changed.split()}"


def test_clean():
    _, status = git("status", "--porcelain")
    assert status == "", f"uncommitted changes left:\n{status}"
