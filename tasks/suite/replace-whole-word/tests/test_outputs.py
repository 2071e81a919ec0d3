from pathlib import Path

TARGET = Path("/app/style.txt")
EXPECTED = 'Color guide\n\nPick one color for headings and one color for links.\nColours should contrast; a colourful page tires the eye.\nThe watercolour banner keeps its own color, color-matched to the logo.\nColor names are lower case in the stylesheet: color: navy;\n'


def test_replaced():
    assert TARGET.is_file(), "/app/style.txt is missing"
    got = TARGET.read_text()
    assert got.rstrip("\n") == EXPECTED.rstrip("\n"), f"style.txt is now:\n{got}\nexpected:\n{EXPECTED}"
