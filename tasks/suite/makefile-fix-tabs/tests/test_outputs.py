import shutil
from pathlib import Path

from judge import agent_run


def project(tmp_path):
    assert Path("/app/Makefile").is_file(), "/app/Makefile is missing"
    root = tmp_path / "app"
    shutil.copytree("/app", root, ignore=shutil.ignore_patterns("out"))
    return root


def make(root, *targets):
    done = agent_run(["make", "-C", str(root), *targets])
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}{done.stderr}"


def test_build(tmp_path):
    root = project(tmp_path)
    make(root)
    report = root / "out" / "report.txt"
    assert report.is_file(), "make did not create out/report.txt"
    assert report.read_text() == "apple\nfig\npear\n", f"out/report.txt is {report.read_text()!r}"


def test_clean(tmp_path):
    root = project(tmp_path)
    make(root)
    make(root, "clean")
    assert not (root / "out").exists(), "make clean left out/"
