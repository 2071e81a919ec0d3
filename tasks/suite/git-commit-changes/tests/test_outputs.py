from pathlib import Path

from judge import agent_run

REPO = Path("/app/project")
TIP = "1c45469230ee017bdc3c946428dee12d565ed33a"
SETUP_CFG = ("[metadata]\nname = tinyfmt\nversion = {version}\ndescription = Formats small tables\n\n"
             "[options]\npy_modules = tinyfmt\npython_requires = >=3.8\n")


def git(*args):
    done = agent_run(["git", "-C", str(REPO), *args])  # git runs hooks and commands from its config
    return done.returncode, done.stdout.strip()


def test_cloned():
    assert (REPO / ".git").is_dir(), "/app/project is not a git clone (run: git clone /app/project.bundle /app/project)"


def test_clean_tree():
    code, status = git("status", "--porcelain")
    assert code == 0 and status == "", f"the working tree has uncommitted changes:\n{status}"


def test_one_new_commit_on_main():
    code, parent = git("rev-parse", "main~1")
    assert code == 0 and parent == TIP, f"main's new commit must sit directly on the old tip {TIP[:10]}; main~1 is {parent[:10]!r}"


def test_message():
    _, subject = git("log", "-1", "--format=%B", "main")
    assert subject == "Release 1.1", f"the commit message must be 'Release 1.1'; found {subject!r}"


def test_setup_cfg():
    done = agent_run(["git", "-C", str(REPO), "show", "main:setup.cfg"])
    expected = SETUP_CFG.format(version="1.1")
    assert done.returncode == 0, "setup.cfg is not in main's last commit"
    assert done.stdout == expected, f"setup.cfg in main's last commit must be {expected!r}; found {done.stdout!r}"


def test_only_setup_cfg_changed():
    _, changed = git("diff", "--name-only", "main~1", "main")
    assert changed.split() == ["setup.cfg"], f"the commit must change just setup.cfg; it changes {changed.split()}"
