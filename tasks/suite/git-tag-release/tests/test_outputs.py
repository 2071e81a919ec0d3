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

TARGET = "8ea4f8026e61fdb8178fd3c11bd887855cd4a217"
TIP = "d78e44b4befc00942bfdec791d85f8568254e99c"


def test_annotated_tag():
    code, kind = git("cat-file", "-t", "refs/tags/v1.0")
    assert code == 0, "there is no tag v1.0"
    assert kind == "tag", f"v1.0 is a lightweight tag (a {kind}); make an annotated one (git tag -a)"


def test_tag_target():
    _, commit = git("rev-parse", "refs/tags/v1.0^{commit}")
    assert commit == TARGET, f"v1.0 points at {commit[:10]}, not at the commit 'Prepare 1.0 release'"


def test_tag_message():
    _, message = git("tag", "-l", "--format=%(contents)", "v1.0")
    assert message.strip() == "Release 1.0", f"the tag's message is {message.strip()!r}"


def test_history_unchanged():
    _, head = git("rev-parse", "main")
    assert head == TIP, f"main moved from {TIP[:10]} to {head[:10]}: commits were added or rewritten"
