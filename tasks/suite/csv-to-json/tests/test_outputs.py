import json
from pathlib import Path

TARGET = Path("/app/employees.json")
EXPECTED = [{'id': 1, 'name': 'Ada Lovelace', 'department': 'Engineering', 'salary': 120000}, {'id': 2, 'name': 'Hopper, Grace', 'department': 'Engineering', 'salary': 115000}, {'id': 3, 'name': 'Alan Turing', 'department': 'Research', 'salary': 110000}, {'id': 4, 'name': 'Katherine "Kat" Johnson', 'department': 'Research', 'salary': 105000}, {'id': 5, 'name': 'Linus Torvalds', 'department': 'Operations', 'salary': 98000}, {'id': 6, 'name': 'Margaret Hamilton', 'department': 'Engineering', 'salary': 125000}]


def test_valid_json_array():
    assert TARGET.is_file(), "/app/employees.json does not exist"
    data = json.loads(TARGET.read_text())
    assert isinstance(data, list), f"top level must be a JSON array, found {type(data).__name__}"
    assert len(data) == len(EXPECTED), f"expected {len(EXPECTED)} objects, found {len(data)}"


def test_rows():
    data = json.loads(TARGET.read_text())
    for got, want in zip(data, EXPECTED):
        assert got == want, f"row {got!r} should be {want!r}"
        assert type(got["id"]) is int and type(got["salary"]) is int, f"id and salary must be integers in {got!r}"
