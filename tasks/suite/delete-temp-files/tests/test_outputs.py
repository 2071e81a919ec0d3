from pathlib import Path

WORK = Path("/app/work")
KEPT = {'work/notes.txt': 'remember the milk\n', 'work/report.tmp.txt': 'not a temp file: the name ends in .txt\n', 'work/cache/index.json': '{"entries": 2}\n', 'work/src/main.py': 'print("main")\n', 'work/src/deep/keep.tmpl': 'a template, not a temp file\n'}
DIRS = ["work/cache", "work/src", "work/src/deep"]


def test_tmp_files_gone():
    left = sorted(str(p.relative_to("/app")) for p in WORK.rglob("*.tmp"))
    assert left == [], f"these .tmp files are still there: {left}"


def test_other_files_kept():
    found = {str(p.relative_to("/app")): p.read_text() for p in WORK.rglob("*") if p.is_file()}
    assert found == KEPT, f"files under /app/work are now {sorted(found)}, expected {sorted(KEPT)}"


def test_directories_kept():
    missing = [d for d in DIRS if not Path("/app", d).is_dir()]
    assert missing == [], f"directories removed: {missing}"
