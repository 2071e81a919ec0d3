from pathlib import Path

TARGET = Path("/app/contacts.csv")
EXPECTED = ['name,email', 'Alice Smith,alice.smith@example.com', 'Bob Jones,bob@example.org', 'Carol De La Cruz,carol@example.net', "Dave O'brien,dave@example.com", 'Eve,eve@example.io']


def test_header():
    assert TARGET.is_file(), "/app/contacts.csv does not exist"
    lines = TARGET.read_text().splitlines()
    assert lines and lines[0] == "name,email", f"first line must be 'name,email', found {lines[:1]}"


def test_rows():
    lines = [line.rstrip() for line in TARGET.read_text().splitlines() if line.strip()]
    assert len(lines) == len(EXPECTED), (
        f"expected {len(EXPECTED) - 1} contacts after removing duplicates, found {len(lines) - 1}: {lines[1:]}")
    for got, want in zip(lines, EXPECTED):
        assert got == want, f"line {got!r} should be {want!r} (full expected file: {EXPECTED})"
