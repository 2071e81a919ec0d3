from pathlib import Path

TARGET = Path("/app/top_words.txt")
EXPECTED = ['the 12', 'river 5', 'water 5', 'a 4', 'and 4']


def test_top_words():
    assert TARGET.is_file(), "/app/top_words.txt does not exist"
    lines = [line.strip() for line in TARGET.read_text().strip().splitlines()]
    assert len(lines) == 5, f"expected 5 lines, found {len(lines)}: {lines}"
    assert lines == EXPECTED, f"top words are {lines}, expected {EXPECTED}"
