import sys
from pathlib import Path

from judge import agent_run

SCRIPT = "/app/wc.py"


def wc(*args):
    assert Path(SCRIPT).is_file(), f"{SCRIPT} is missing"
    return agent_run([sys.executable, SCRIPT, *map(str, args)])


def test_one_file(tmp_path):
    f = tmp_path / "a.txt"
    f.write_text("Grüße  aus Köln\nzwei   Wörter\n\nende\n")
    done = wc(f)
    assert done.returncode == 0, f"exit status {done.returncode}: {done.stderr[-500:]}"
    assert done.stdout == f"4 6 40 {f}\n", f"wc.py {f} printed {done.stdout!r}, expected '4 6 40 {f}' alone"


def test_two_files_and_total(tmp_path):
    a, b = tmp_path / "a.txt", tmp_path / "b.txt"
    a.write_text("one two\n")
    b.write_text("\tthree\n\n  four five six")
    done = wc(a, b)
    assert done.stdout == f"1 2 8 {a}\n2 4 23 {b}\n3 6 31 total\n", f"wc.py a b printed {done.stdout!r}"


def test_unreadable_file(tmp_path):
    a = tmp_path / "a.txt"
    a.write_text("x\n")
    missing = tmp_path / "missing.txt"
    done = wc(missing, a)
    assert done.returncode == 1, f"exit status {done.returncode}, expected 1 for a missing file"
    assert f"wc.py: {missing}: cannot read" in done.stderr, f"stderr was {done.stderr[-300:]!r}"
    assert done.stdout == f"1 1 2 {a}\n1 1 2 total\n", f"wc.py missing a printed {done.stdout!r}"
