import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


def contents(root):
    return {p.name: p.read_text() for p in sorted(root.iterdir())}


def test_rotation_sequence(tmp_path):
    (tmp_path / "other.txt").write_text("keep me")
    for day in ("mon", "tue", "wed", "thu"):
        (tmp_path / "app.log").write_text(day)
        done = run("/app/rotate.sh", tmp_path, 2)
        assert done.returncode == 0, f"rotate.sh exited with {done.returncode}: {done.stderr}"
    got = contents(tmp_path)
    want = {"app.log": "", "app.log.1": "thu", "app.log.2": "wed", "other.txt": "keep me"}
    assert got == want, f"after writing mon..thu and rotating each with KEEP=2 the directory holds {got}, expected {want}"


def test_first_rotation(tmp_path):
    (tmp_path / "app.log").write_text("first")
    run("/app/rotate.sh", tmp_path, 3)
    assert contents(tmp_path) == {"app.log": "", "app.log.1": "first"}, f"one rotation left {contents(tmp_path)}"


def test_missing_log(tmp_path):
    (tmp_path / "app.log.1").write_text("old")
    done = run("/app/rotate.sh", tmp_path, 3)
    assert done.returncode == 1, f"with no app.log rotate.sh must exit 1, got {done.returncode}"
    assert done.stderr.strip(), "with no app.log rotate.sh must print an error to stderr"
    assert contents(tmp_path) == {"app.log.1": "old"}, f"with no app.log nothing may change, found {contents(tmp_path)}"


def test_bad_arguments(tmp_path):
    (tmp_path / "app.log").write_text("x")
    for args in ([tmp_path], [tmp_path, "zero"], [tmp_path, 0], [tmp_path, -1]):
        done = run("/app/rotate.sh", *args)
        assert done.returncode == 2, f"rotate.sh {args[1:]} must exit 2 (usage), got {done.returncode}"
        assert done.stderr.strip(), f"rotate.sh {args[1:]} must print usage to stderr"
    assert contents(tmp_path) == {"app.log": "x"}, "a usage error must change nothing"
