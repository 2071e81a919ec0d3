from pathlib import Path

from judge import agent_run

REPO = Path("/app/project")
TIP = 'a3e82a5a3cb55a51760b2db540ccc7d086046f64'
GOOD_GREET = 'def greet(name):\n    return f"Hello, {name}!"\n\n\ndef farewell(name):\n    return f"Goodbye, {name}."\n'


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])  # git runs hooks and commands from its config
    return done.returncode, done.stdout.strip()


def test_cloned():
    assert (REPO / ".git").is_dir(), "/app/project is not a git clone (run: git clone /app/project.bundle /app/project)"


def test_history_kept():
    code, _ = git("merge-base", "--is-ancestor", TIP, "HEAD")
    assert code == 0, f"commit {TIP[:10]} (the original branch tip) is no longer in HEAD's history: history was rewritten"


def test_clean_tree():
    _, status = git("status", "--porcelain")
    assert status == "", f"the working tree has uncommitted changes:\n{status}"


def test_greet_restored():
    code, committed = git("show", "HEAD:greet.py")
    assert code == 0, "greet.py is missing from HEAD"
    assert committed + "\n" == GOOD_GREET, f"greet.py in HEAD should be the version before the bad commit, found:\n{committed}"


def test_later_work_kept():
    _, readme = git("show", "HEAD:README.md")
    assert "farewell(name)" in readme, "the README change from the later commit 'Add usage docs' was lost"


def test_new_commit():
    _, head = git("rev-parse", "HEAD")
    assert head != TIP, "HEAD is still the original tip: nothing was committed"
