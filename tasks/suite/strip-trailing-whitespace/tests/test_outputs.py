from pathlib import Path

TARGET = Path("/app/greet.py")
CLEAN = ['import sys', '', 'def main():', '    name = sys.argv[1]', '', '    print(f"hi {name}")', '', '', 'if __name__ == "__main__":', '    main()']


def test_no_trailing_whitespace():
    assert TARGET.is_file(), "/app/greet.py is missing"
    lines = TARGET.read_text().rstrip("\n").split("\n")
    dirty = [n for n, line in enumerate(lines, start=1) if line != line.rstrip(" \t")]
    assert dirty == [], f"lines {dirty} still end in whitespace"


def test_rest_unchanged():
    lines = TARGET.read_text().rstrip("\n").split("\n")
    assert lines == CLEAN, f"greet.py is now {lines}, expected {CLEAN}"
