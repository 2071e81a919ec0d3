import os
import shutil
from pathlib import Path

from judge import agent_run


def project(tmp_path):
    assert Path("/app/Makefile").is_file(), "/app/Makefile does not exist"
    root = tmp_path / "app"
    shutil.copytree("/app", root, ignore=shutil.ignore_patterns("hello", "*.o"))
    return root


def make(root, *targets):
    done = agent_run(["make", "-C", str(root), *targets])
    assert done.returncode == 0, f"make {' '.join(targets)} failed:\n{done.stdout}{done.stderr}"


def hello(root, *args):
    assert (root / "hello").is_file(), "make did not build ./hello"
    return agent_run([str(root / "hello"), *args]).stdout


def test_build_and_run(tmp_path):
    root = project(tmp_path)
    make(root)
    assert (root / "main.o").is_file() and (root / "greet.o").is_file(), "make did not leave main.o and greet.o"
    assert hello(root) == "Hello, world!\n", f"./hello printed {hello(root)!r}"
    assert hello(root, "Ada") == "Hello, Ada!\n", f"./hello Ada printed {hello(root, 'Ada')!r}"


def test_rebuilds_after_a_change(tmp_path):
    root = project(tmp_path)
    make(root)
    stamp = (root / "hello").stat().st_mtime
    source = root / "greet.c"
    source.write_text(source.read_text().replace("Hello, %s!", "Hi, %s!"))
    os.utime(source, (stamp + 10, stamp + 10))
    make(root)
    assert hello(root, "Ada") == "Hi, Ada!\n", "after greet.c changed, make did not rebuild hello"


def test_rebuilds_after_a_header_change(tmp_path):
    root = project(tmp_path)
    make(root)
    stamp = (root / "hello").stat().st_mtime_ns
    later = stamp / 1e9 + 10
    os.utime(root / "greet.h", (later, later))
    make(root)
    assert (root / "hello").stat().st_mtime_ns > stamp, "after greet.h changed, make did not rebuild hello"


def test_clean(tmp_path):
    root = project(tmp_path)
    make(root)
    make(root, "clean")
    left = sorted(p.name for p in root.iterdir() if p.name == "hello" or p.suffix == ".o")
    assert left == [], f"make clean left {left}"
