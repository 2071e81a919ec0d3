from pathlib import Path

from judge import agent_run

REPO = Path("/app/project")
TIP = '69428a0d473379bf54d55213b19b165e5e9369a5'
FEATURE = '1fd7adca09ec5d41b4aa85a138485d6857fa2a47'
EXPECTED = '[app]\nname = demo\nworkers = 8\ntimeout = 60\n'


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


def test_merge_commit():
    code, parents = git("rev-list", "--parents", "-n", "1", "HEAD")
    assert code == 0, "cannot read HEAD"
    parents = parents.split()[1:]
    assert parents == [TIP, FEATURE], (
        f"HEAD should be a merge commit with parents main ({TIP[:10]}) and feature ({FEATURE[:10]}), "
        f"found parents {[p[:10] for p in parents]}")


def test_on_main():
    _, branch = git("rev-parse", "--abbrev-ref", "HEAD")
    assert branch == "main", f"HEAD should be on branch main, found {branch!r}"


def test_settings_resolved():
    code, committed = git("show", "HEAD:settings.conf")
    assert code == 0, "settings.conf is missing from HEAD"
    assert "<<<<<<<" not in committed and ">>>>>>>" not in committed, "conflict markers were committed"
    assert committed + "\n" == EXPECTED, f"settings.conf in HEAD is:\n{committed}\nexpected:\n{EXPECTED}"


def test_both_sides_kept():
    for name in ("CHANGELOG.md", "README.md"):
        code, _ = git("cat-file", "-e", f"HEAD:{name}")
        assert code == 0, f"{name} is missing from HEAD; the merge must keep both branches' files"
