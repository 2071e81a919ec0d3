from pathlib import Path

TARGET = Path("/app/suspects.txt")
EXPECTED = ['alice', 'bob', 'root']


def test_suspects():
    assert TARGET.is_file(), "/app/suspects.txt does not exist"
    lines = [line.strip() for line in TARGET.read_text().strip().split("\n")]
    assert lines == EXPECTED, f"/app/suspects.txt holds {lines}, expected {EXPECTED}"
