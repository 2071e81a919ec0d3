from pathlib import Path

TARGET = Path("/app/error_ids.txt")
EXPECTED = ['102', '105', '108']


def test_ids():
    assert TARGET.is_file(), "/app/error_ids.txt does not exist"
    lines = [line.strip() for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/error_ids.txt holds {lines}, expected {EXPECTED}"
