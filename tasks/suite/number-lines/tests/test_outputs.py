from pathlib import Path

TARGET = Path("/app/numbered.txt")
TODO = ['buy milk', 'call the bank', '', 'water the plants', '  indented item', '', 'pay rent']


def test_numbered():
    assert TARGET.is_file(), "/app/numbered.txt does not exist"
    lines = [line.rstrip() for line in TARGET.read_text().rstrip("\n").split("\n")]
    expected = [f"{n}: {text}".rstrip() for n, text in enumerate(TODO, start=1)]
    assert lines == expected, f"/app/numbered.txt holds {lines}, expected {expected}"
