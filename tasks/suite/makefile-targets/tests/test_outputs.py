import os
import shutil
from pathlib import Path

from judge import agent_run


def project(tmp_path):
    assert Path("/app/Makefile").is_file(), "/app/Makefile does not exist"
    root = tmp_path / "app"
    shutil.copytree("/app", root, ignore=shutil.ignore_patterns("build"))
    return root


def make(root, *targets):
    done = agent_run(["make", "-C", str(root), *targets])
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}{done.stderr}"


def book(root):
    path = root / "build" / "book.txt"
    assert path.is_file(), "build/book.txt was not created"
    return path.read_text()


def test_default_target_builds(tmp_path):
    root = project(tmp_path)
    make(root)
    assert book(root) == 'Once upon a time\nthings happened\nand they ended.\n', f"book.txt is {book(root)!r}"


def test_rebuild_on_change_and_new_file(tmp_path):
    root = project(tmp_path)
    make(root, "build")
    stamp = (root / "build" / "book.txt").stat().st_mtime
    new = root / "src" / "04-epilogue.txt"
    new.write_text("The end.\n")
    os.utime(new, (stamp + 10, stamp + 10))
    make(root, "build")
    assert book(root).endswith("The end.\n"), f"after adding src/04-epilogue.txt, make build gave {book(root)!r}"


def test_clean(tmp_path):
    root = project(tmp_path)
    make(root, "build")
    make(root, "clean")
    assert not (root / "build").exists(), "make clean left the build directory"
