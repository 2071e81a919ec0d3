from pathlib import Path

TARGET = Path("/app/unique.txt")
EXPECTED = ['Ada', 'Grace', 'Linus', 'Margaret', 'Ken', 'Dennis', 'ada', 'Barbara', 'Frances']


def test_unique_lines_in_order():
    assert TARGET.is_file(), "/app/unique.txt does not exist"
    lines = TARGET.read_text().rstrip("\n").split("\n")
    assert lines == EXPECTED, f"/app/unique.txt holds {lines}, expected {EXPECTED}"
