import re
from pathlib import Path

TARGET = Path("/app/total.txt")


def test_total():
    assert TARGET.is_file(), "/app/total.txt does not exist"
    text = TARGET.read_text().strip()
    assert re.fullmatch(r"[0-9]+\.[0-9]{2}", text), f"/app/total.txt must hold a number with two decimals, found {text!r}"
    assert text == "1550.94", f"/app/total.txt says {text}; that is not the sum of the amount column"
