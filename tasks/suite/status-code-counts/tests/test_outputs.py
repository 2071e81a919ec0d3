from pathlib import Path

TARGET = Path("/app/status_counts.txt")
EXPECTED = ['200 28', '301 4', '302 3', '403 2', '404 15', '500 8']


def test_counts():
    assert TARGET.is_file(), "/app/status_counts.txt does not exist"
    lines = [" ".join(line.split()) for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/status_counts.txt holds {lines}, expected {EXPECTED}"
