from pathlib import Path

TARGET = Path("/app/out_of_stock.csv")
EXPECTED = ['id,name,stock,price', '2,eraser,0,0.80', '4,stapler,0,7.99', '7,scissors,0,3.30']


def test_rows():
    assert TARGET.is_file(), "/app/out_of_stock.csv does not exist"
    lines = [line.rstrip("\r") for line in TARGET.read_text().rstrip("\n").split("\n")]
    assert lines == EXPECTED, f"/app/out_of_stock.csv holds {lines}, expected {EXPECTED}"
