import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


def source(tmp_path):
    src = tmp_path / "my docs"
    src.mkdir()
    for name in ["notes.txt", "to do.txt", "image.png", "plan.txt.old"]:
        (src / name).write_text(f"content of {name}\n")
    (src / "sub").mkdir()
    (src / "sub" / "inner.txt").write_text("inner\n")
    return src


def test_copies_txt_files(tmp_path):
    src, dest = source(tmp_path), tmp_path / "back up"
    done = run("/app/backup.sh", src, dest)
    assert done.returncode == 0, f"backup.sh exited with {done.returncode}: {done.stderr[-300:]}"
    assert done.stdout.strip() == "2 files backed up", f"backup.sh printed {done.stdout!r}"
    names = sorted(p.name for p in dest.iterdir()) if dest.is_dir() else []
    assert names == ["notes.txt.bak", "to do.txt.bak"], f"DEST holds {names}"
    assert (dest / "to do.txt.bak").read_text() == "content of to do.txt\n"


def test_existing_dest(tmp_path):
    src, dest = source(tmp_path), tmp_path / "existing"
    dest.mkdir()
    (dest / "old.bak").write_text("old\n")
    done = run("/app/backup.sh", src, dest)
    assert done.returncode == 0 and done.stdout.strip() == "2 files backed up", \
        f"with an existing DEST, backup.sh exited {done.returncode} and printed {done.stdout!r} {done.stderr[-200:]!r}"


def test_no_txt_files(tmp_path):
    src = tmp_path / "empty"
    src.mkdir()
    (src / "a.png").write_text("x")
    done = run("/app/backup.sh", src, tmp_path / "out")
    assert done.returncode == 0 and done.stdout.strip() == "0 files backed up", \
        f"with no .txt files, backup.sh exited {done.returncode} and printed {done.stdout!r}"


def test_usage_errors(tmp_path):
    src = source(tmp_path)
    for args in [(), (src,), (tmp_path / "nope", tmp_path / "out"), (src / "notes.txt", tmp_path / "out")]:
        done = run("/app/backup.sh", *args)
        assert done.returncode == 2, f"backup.sh {' '.join(map(str, args))} exited with {done.returncode}, expected 2"
        assert "usage" in done.stderr.lower(), f"backup.sh {' '.join(map(str, args))} printed no usage line on stderr"
