from pathlib import Path

from judge import agent_run

REPO = Path("/app/project")
TIP = '23d8de6f938d5dae5f620f8ab46a5fc70cd9c69e'
EXPECTED = '{\n  "port": 8000,\n  "debug": false,\n  "workers": 3,\n  "log_dir": "/var/log/app"\n}\n'


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


def test_file_restored_and_committed():
    path = REPO / "config" / "defaults.json"
    assert path.is_file(), "config/defaults.json is missing from the working tree"
    assert path.read_text() == EXPECTED, f"config/defaults.json differs from its last committed version: {path.read_text()!r}"
    code, committed = git("show", "HEAD:config/defaults.json")
    assert code == 0, "config/defaults.json is not committed in HEAD"
    assert committed + "\n" == EXPECTED, "the committed config/defaults.json differs from the original"


def test_new_commit():
    _, head = git("rev-parse", "HEAD")
    assert head != TIP, "HEAD is still the original tip: the restored file was not committed"
