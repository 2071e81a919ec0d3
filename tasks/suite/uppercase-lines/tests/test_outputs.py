from pathlib import Path

TARGET = Path("/app/shout.txt")
EXPECTED = ['HELLO, WORLD!', 'THE QUICK BROWN FOX', 'JUMPS OVER THE LAZY DOG.', "IT'S 5 O'CLOCK SOMEWHERE", 'READY? SET... GO!', 'MIXED CASE, MIXED FEELINGS', 'E-MAIL: BOB@EXAMPLE.COM', 'LAST LINE; THE END']


def test_shout_lines():
    assert TARGET.is_file(), "/app/shout.txt does not exist"
    content = TARGET.read_text()
    # One line per input line; the last line's newline may be missing, but no extra lines.
    lines = (content[:-1] if content.endswith("\n") else content).split("\n")
    assert len(lines) == len(EXPECTED), (
        f"/app/shout.txt has {len(lines)} lines, expected {len(EXPECTED)} (one per line of /app/words.txt)")
    for number, (found, want) in enumerate(zip(lines, EXPECTED), 1):
        assert found == want, f"line {number} of /app/shout.txt is {found!r}, expected {want!r}"
