import os
from pathlib import Path

from judge import agent_run


def run(script, *args, cwd=None):
    assert Path(script).is_file(), f"{script} does not exist"
    assert os.access(script, os.X_OK), f"{script} is not executable (chmod +x {script})"
    return agent_run([script, *map(str, args)], cwd=cwd)


def make_tree(root):
    files = {"one.bin": 50, "deep/a/b/c/nested file.dat": 400, "deep/x.log": 50, "deep/w.log": 50,
             "top.txt": 999, "empty": 0, "sub dir/with space.txt": 400, "sub dir/z": 7}
    for rel, size in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(b"x" * size)
    (root / "link").symlink_to(root / "top.txt")
    return files


def expected(files, n):
    ranked = sorted(files.items(), key=lambda kv: (-kv[1], kv[0].encode()))
    return "".join(f"{size} {rel}\n" for rel, size in ranked[:n])


def test_top_five(tmp_path):
    files = make_tree(tmp_path)
    done = run("/app/largest.sh", tmp_path, 5)
    assert done.returncode == 0, f"largest.sh exited with {done.returncode}: {done.stderr}"
    assert done.stdout == expected(files, 5), f"largest.sh DIR 5 printed:\n{done.stdout}\nexpected:\n{expected(files, 5)}"


def test_n_larger_than_file_count(tmp_path):
    files = make_tree(tmp_path)
    done = run("/app/largest.sh", tmp_path, 50)
    assert done.stdout == expected(files, 50), f"largest.sh DIR 50 printed:\n{done.stdout}\nexpected all files:\n{expected(files, 50)}"


def test_sample_dir():
    done = run("/app/largest.sh", "/app/sample", 2)
    assert done.stdout == "300 docs/big report.txt\n120 img/icon.svg\n", f"largest.sh /app/sample 2 printed {done.stdout!r}"
