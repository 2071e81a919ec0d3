import re
from pathlib import Path

TARGET = Path("/app/warn_count.txt")


def test_warn_count():
    assert TARGET.is_file(), "/app/warn_count.txt does not exist"
    content = TARGET.read_text()
    assert re.fullmatch(r"[0-9]+\n?", content), (
        f"/app/warn_count.txt must hold only the number (digits, optionally one newline), found {content!r}")
    assert int(content) == 6, f"/app/warn_count.txt says {content.strip()}, expected 6 WARN lines"
