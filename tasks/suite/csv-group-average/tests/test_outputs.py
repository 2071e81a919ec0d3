import csv
from pathlib import Path

TARGET = Path("/app/averages.csv")
EXPECTED = [['art', '83.0', '3'], ['math', '79.0', '4'], ['physics', '82.7', '3']]


def test_averages():
    assert TARGET.is_file(), "/app/averages.csv does not exist"
    with TARGET.open(newline="") as handle:
        rows = [[cell.strip() for cell in row] for row in csv.reader(handle) if row]
    assert rows[:1] == [["subject", "average", "count"]], f"the header is {rows[:1]}"
    assert rows[1:] == EXPECTED, f"/app/averages.csv rows are {rows[1:]}, expected {EXPECTED}"
