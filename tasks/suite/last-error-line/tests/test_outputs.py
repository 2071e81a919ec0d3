from pathlib import Path

TARGET = Path("/app/last_error.txt")
EXPECTED = "2024-05-02 08:13:44 ERROR worker 3 crashed: out of memory"


def test_last_error_line():
    assert TARGET.is_file(), "/app/last_error.txt does not exist"
    content = TARGET.read_text()
    assert content in (EXPECTED, EXPECTED + "\n"), (
        f"/app/last_error.txt must hold exactly the last ERROR line {EXPECTED!r}, found {content!r}")
