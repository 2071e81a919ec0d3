from pathlib import Path

from judge import agent_run

REPO = Path("/app/notes")
FILES = {
    "todo.txt": "buy milk\ncall the plumber\nwater the plants\n",
    "ideas.txt": "a bike rack for the balcony\na shared recipe book\n",
    "meetings.txt": "Team meeting moved to Thursday, 10:00.\n",
}


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])  # git runs hooks and commands from its config
    return done.returncode, done.stdout.strip()


def test_is_repository():
    assert (REPO / ".git").is_dir(), "/app/notes is not a git repository (no /app/notes/.git; run git init there)"


def test_branch():
    code, branch = git("symbolic-ref", "--short", "HEAD")
    assert code == 0 and branch in {"main", "master"}, f"HEAD must be on branch main (or master); found {branch!r}"


def test_exactly_one_commit():
    code, count = git("rev-list", "--count", "--all")
    assert code == 0 and count == "1", f"the repository must hold exactly one commit; found {count!r}"
    code, _ = git("rev-parse", "--verify", "HEAD")
    assert code == 0, "the current branch has no commit"


def test_message():
    _, subject = git("log", "-1", "--format=%B", "HEAD")
    assert subject == "Initial commit", f"the commit message must be 'Initial commit'; found {subject!r}"


def test_commit_holds_the_three_files():
    _, listed = git("ls-tree", "-r", "--name-only", "HEAD")
    assert sorted(listed.split()) == sorted(FILES), f"the commit must hold exactly {sorted(FILES)}; it holds {listed.split()}"
    for name, text in FILES.items():
        done = agent_run(["git", "-C", str(REPO), "show", f"HEAD:{name}"])
        assert done.stdout == text, f"{name} in the commit must be the original file {text!r}; found {done.stdout!r}"


def test_clean_tree():
    code, status = git("status", "--porcelain")
    assert code == 0 and status == "", f"the working tree has uncommitted changes:\n{status}"
