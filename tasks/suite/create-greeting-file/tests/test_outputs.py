from pathlib import Path

TARGET = Path("/app/greeting.txt")


def test_file_exists():
    assert TARGET.is_file(), "/app/greeting.txt does not exist"


def test_exact_content():
    content = TARGET.read_text()
    assert content == "Hello, evoharness!\n", (
        f"/app/greeting.txt must contain 'Hello, evoharness!' plus one newline; found {content!r}")
