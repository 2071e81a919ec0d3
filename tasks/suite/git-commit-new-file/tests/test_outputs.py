from pathlib import Path

from judge import agent_run

REPO = Path("/app/project")


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])  # git runs hooks and commands from its config
    return done.returncode, done.stdout.strip()


def test_cloned():
    assert (REPO / ".git").is_dir(), "/app/project is not a git clone (run: git clone /app/project.bundle /app/project)"


def test_clean_tree():
    _, status = git("status", "--porcelain")
    assert status == "", f"the working tree has uncommitted changes:\n{status}"

TIP = "b3386e516f597a3711db2b0f7ef60689a5d00191"


def test_one_new_commit_on_main():
    code, parent = git("rev-parse", "main~1")
    assert code == 0 and parent == TIP, f"main's new commit must sit directly on the old tip {TIP[:10]}; main~1 is {parent[:10]}"


def test_message():
    _, subject = git("log", "-1", "--format=%s", "main")
    assert subject == "Bump version to 2.0.0", f"the commit message is {subject!r}"


def test_version_file():
    code, text = git("show", "main:VERSION")
    assert code == 0, "VERSION is not in main's last commit"
    assert text.strip() == "2.0.0", f"VERSION holds {text!r}"


def test_only_version_added():
    _, changed = git("diff", "--name-only", "main~1", "main")
    assert changed.split() == ["VERSION"], f"the commit changes {changed.split()}, not just VERSION"
