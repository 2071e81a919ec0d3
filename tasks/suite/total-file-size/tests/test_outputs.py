from pathlib import Path

TARGET = Path("/app/total_bytes.txt")


def test_total():
    assert TARGET.is_file(), "/app/total_bytes.txt does not exist"
    text = TARGET.read_text().strip()
    assert text.isdigit(), f"/app/total_bytes.txt must hold only a number, found {text!r}"
    assert int(text) == 4815, f"/app/total_bytes.txt says {text}; that is not the files' total size"
