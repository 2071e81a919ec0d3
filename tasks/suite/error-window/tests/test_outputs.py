from pathlib import Path

TARGET = Path("/app/error_window.txt")


def test_window():
    assert TARGET.is_file(), "/app/error_window.txt does not exist"
    lines = [" ".join(line.split()) for line in TARGET.read_text().strip().split("\n")]
    assert lines == ["2024-05-01 09:07:02", "2024-05-01 11:45:00"], f"/app/error_window.txt holds {lines}"
