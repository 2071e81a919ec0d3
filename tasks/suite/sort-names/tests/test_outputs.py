from pathlib import Path

TARGET = Path("/app/names_sorted.txt")
SOURCE = Path("/app/names.txt")
ORIGINAL = 'Olivia\nLiam\nEmma\nNoah\nSophia\nEthan\nMia\nNoah\nLucas\nZoe\nEmma\nGrace\n'
EXPECTED = ['Emma', 'Ethan', 'Grace', 'Liam', 'Lucas', 'Mia', 'Noah', 'Olivia', 'Sophia', 'Zoe']


def test_sorted_unique_names():
    assert TARGET.is_file(), "/app/names_sorted.txt does not exist"
    content = TARGET.read_text()
    # The last line's newline may be missing, but no blank or extra lines.
    lines = (content[:-1] if content.endswith("\n") else content).split("\n")
    repeated = sorted({name for name in lines if lines.count(name) > 1})
    assert repeated == [], f"/app/names_sorted.txt lists {repeated} more than once; each name must appear once"
    assert lines == EXPECTED, f"/app/names_sorted.txt holds {lines}, expected {EXPECTED}"


def test_source_unchanged():
    found = SOURCE.read_text() if SOURCE.is_file() else None
    assert found == ORIGINAL, f"/app/names.txt must stay unchanged; expected {ORIGINAL!r}, found {found!r}"
