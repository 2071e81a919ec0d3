from pathlib import Path

TARGET = Path("/app/top_ips.txt")
EXPECTED = ['192.168.1.20 9', '10.0.0.12 7', '10.0.0.9 7']


def test_top_ips():
    assert TARGET.is_file(), "/app/top_ips.txt does not exist"
    lines = [" ".join(line.split()) for line in TARGET.read_text().strip().splitlines()]
    assert lines == EXPECTED, f"/app/top_ips.txt holds {lines}, expected {EXPECTED}"
