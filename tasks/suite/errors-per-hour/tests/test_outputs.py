from pathlib import Path

TARGET = Path("/app/errors_by_hour.txt")
EXPECTED = ['2024-05-01T21 3', '2024-05-01T23 3', '2024-05-02T01 2', '2024-05-02T02 1']


def test_hours():
    assert TARGET.is_file(), "/app/errors_by_hour.txt does not exist"
    lines = [" ".join(line.split()) for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/errors_by_hour.txt holds {lines}, expected {EXPECTED}"
