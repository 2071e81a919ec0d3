from pathlib import Path

TARGET = Path("/app/error_count.txt")


def test_error_count():
    assert TARGET.is_file(), "/app/error_count.txt does not exist"
    text = TARGET.read_text().strip()
    assert text.isdigit(), f"/app/error_count.txt must hold only a number, found {text!r}"
    assert int(text) == 5, (
        f"/app/error_count.txt says {text}; count only lines whose third field is exactly ERROR")
