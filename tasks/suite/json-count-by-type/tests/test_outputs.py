import json
from pathlib import Path

TARGET = Path("/app/counts.json")
EXPECTED = {'click': 3, 'purchase': 2, 'signup': 1, 'view': 6}


def test_counts():
    assert TARGET.is_file(), "/app/counts.json does not exist"
    try:
        got = json.loads(TARGET.read_text())
    except ValueError as error:
        raise AssertionError(f"/app/counts.json is not valid JSON: {error}")
    assert got == EXPECTED, f"/app/counts.json holds {got}, expected {EXPECTED}"
    assert all(type(v) is int for v in got.values()), "counts must be JSON integers"
