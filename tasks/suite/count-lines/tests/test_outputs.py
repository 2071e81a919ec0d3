from pathlib import Path

TARGET = Path("/app/line_count.txt")


def test_count():
    assert TARGET.is_file(), "/app/line_count.txt does not exist"
    text = TARGET.read_text().strip()
    assert text.isdigit(), f"/app/line_count.txt must hold only a number, found {text!r}"
    assert int(text) == 14, (
        f"/app/line_count.txt says {text}; that is not the number of lines in poem.txt "
        "(blank lines count too)")
