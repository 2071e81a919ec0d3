import os
import stat
from pathlib import Path

SCRIPTS = ["deploy.sh", "backup.sh", "clean up.sh", "status.sh"]
OTHERS = ["notes.txt", "config.sh.example"]


def mode(name):
    path = Path("/app/bin") / name
    assert path.is_file(), f"{path} is missing"
    return path.stat().st_mode


def test_scripts_executable():
    not_exec = [n for n in SCRIPTS if not mode(n) & stat.S_IXUSR]
    assert not_exec == [], f"not executable: {not_exec}"


def test_others_not_executable():
    wrong = [n for n in OTHERS if mode(n) & (stat.S_IXUSR | stat.S_IXGRP | stat.S_IXOTH)]
    assert wrong == [], f"these must not be executable: {wrong}"


def test_contents_unchanged():
    assert Path("/app/bin/deploy.sh").read_text() == "#!/bin/bash\necho deploying\n"
    assert sorted(os.listdir("/app/bin")) == sorted(SCRIPTS + OTHERS), "files were added, removed or renamed"
