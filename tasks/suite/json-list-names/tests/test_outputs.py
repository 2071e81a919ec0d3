from pathlib import Path

TARGET = Path("/app/names.txt")
EXPECTED = ["Ada", "Grace", "Linus", "Margaret", "Ken", "Barbara"]


def test_file_exists():
    assert TARGET.is_file(), "/app/names.txt does not exist"


def test_names_in_order():
    lines = TARGET.read_text().rstrip("\n").split("\n")
    assert lines == EXPECTED, f"/app/names.txt holds {lines}, expected exactly {EXPECTED} (one name per line, no quotes)"
