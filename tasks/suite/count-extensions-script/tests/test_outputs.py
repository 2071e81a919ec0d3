import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


FILES = ["report.TXT", "notes.txt", "my file.txt", "photo.JPG", "pic.jpg", "README", "Makefile",
         "backup.tar.gz", "data.csv", "sub/inner.txt", "sub/deep/x.py"]


def test_counts(tmp_path):
    for rel in FILES:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x\n")
    done = run("/app/extcount.sh", tmp_path)
    expected = "csv 1\ngz 1\njpg 2\nnone 2\ntxt 3\n"
    assert done.returncode == 0, f"extcount.sh exited with {done.returncode}: {done.stderr[-300:]}"
    lines = [" ".join(line.split()) for line in done.stdout.strip().split("\n")]
    assert lines == expected.strip().split("\n"), f"extcount.sh DIR printed:\n{done.stdout}\nexpected:\n{expected}"


def test_sample():
    done = run("/app/extcount.sh", "/app/sample")
    lines = [" ".join(line.split()) for line in done.stdout.strip().split("\n")]
    assert lines == ["jpg 1", "none 1", "txt 2"], f"extcount.sh /app/sample printed {done.stdout!r}"
