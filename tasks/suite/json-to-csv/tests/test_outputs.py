import csv
from pathlib import Path

TARGET = Path("/app/users.csv")
EXPECTED = [['id', 'name', 'email'], ['1', 'Ada Lovelace', 'ada@example.com'], ['2', 'Grace Hopper', ''], ['3', 'King, Martin Jr.', 'mlk@example.org'], ['4', 'Alan Turing', 'alan@example.net'], ['5', 'Dorothy "Dot" Vaughan', 'dot@example.com']]


def test_rows():
    assert TARGET.is_file(), "/app/users.csv does not exist"
    with TARGET.open(newline="") as handle:
        rows = [row for row in csv.reader(handle)]
    assert rows == EXPECTED, f"/app/users.csv parses as {rows}, expected {EXPECTED}"
