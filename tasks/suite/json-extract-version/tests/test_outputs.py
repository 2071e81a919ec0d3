from pathlib import Path

TARGET = Path("/app/version.txt")


def test_version():
    assert TARGET.is_file(), "/app/version.txt does not exist"
    got = TARGET.read_text().strip()
    assert got == "2.4.1", f"/app/version.txt holds {got!r}; expected the top-level version of package.json"
