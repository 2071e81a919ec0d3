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

PARENT = "0a7d66b212218bd5839dd290d5df443f9c1331a2"
OLD_TIP = "1d975f81690a5f981fe920d00f64fbde836edd0c"


def test_message_fixed():
    _, subject = git("log", "-1", "--format=%B", "main")
    assert subject.strip() == "Fix the parser", f"main's latest commit message is {subject.strip()!r}"


def test_same_parent():
    _, parent = git("rev-parse", "main~1")
    assert parent == PARENT, f"main~1 is {parent[:10]}, expected {PARENT[:10]}: earlier history changed or a commit was added"


def test_same_content():
    _, tree = git("rev-parse", "main^{tree}")
    _, old_tree = git("rev-parse", OLD_TIP + "^{tree}")
    assert tree == old_tree, "the files in main's latest commit changed; only the message may change"
