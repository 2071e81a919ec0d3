"""Make the scripts in a folder executable."""
from _common import WORDS, Task

CATEGORY = "file-operations"
WHAT = "make every script with one extension in a folder executable, and nothing else"
EXTS = [".sh", ".py", ".sh", ".pl", ".sh", ".py"]
FOLDERS = ["bin", "scripts", "tools", "hooks", "ci", "cron"]


def make(i, rng):
    ext, folder = EXTS[i], FOLDERS[i]
    stems = rng.sample(WORDS, 5)
    shebang = {".sh": "#!/bin/bash\n", ".py": "#!/usr/bin/env python3\n", ".pl": "#!/usr/bin/perl\n"}[ext]
    scripts = [f"{folder}/{s}{ext}" for s in stems[:3]]
    others = [f"{folder}/{stems[3]}.md", f"{folder}/{stems[4]}{ext}.txt"]
    files = {p: shebang + f"# {p}\n" for p in scripts}
    files.update({p: "not a script\n" for p in others})
    instruction = f"""Make every file in `/app/{folder}` whose name ends in `{ext}` executable
(`chmod +x`). The other files there must not become executable."""
    tests = f'''
import os


def test_scripts_executable():
    for path in {["/app/" + p for p in scripts]!r}:
        assert Path(path).is_file(), f"{{path}} is missing"
        assert os.access(path, os.X_OK), f"{{path}} is not executable"


def test_others_not_executable():
    for path in {["/app/" + p for p in others]!r}:
        assert Path(path).is_file(), f"{{path}} is missing"
        assert not os.access(path, os.X_OK), f"{{path}} must not be executable"
'''
    return Task(instruction, files, tests, f"chmod +x /app/{folder}/*{ext}", tags=["files", "chmod"])
