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

MAIN_TIP = "8cd255b4f7adc4407fd68c9a82bda3283625a9d8"
FIXED = "def ratio(a, b):\n    if b == 0:\n        return 0.0\n    return a / b"


def test_one_new_commit():
    _, parents = git("log", "-1", "--format=%P", "main")
    assert parents.split() == [MAIN_TIP], f"main's latest commit must have the old main tip {MAIN_TIP[:10]} as its only parent; its parents are {parents.split()}"


def test_fix_applied():
    code, calc = git("show", "main:calc.py")
    assert code == 0 and calc == FIXED, f"calc.py on main is:\n{calc}"


def test_other_develop_commits_left_out():
    code, _ = git("cat-file", "-e", "main:experimental.py")
    assert code != 0, "experimental.py (from another develop commit) reached main"
    _, cli = git("show", "main:cli.py")
    assert "VERBOSE" not in cli, "the verbose flag (another develop commit) reached main"
    _, readme = git("show", "main:README.md")
    assert "python3 cli.py" in readme, "main's own README change was lost"
