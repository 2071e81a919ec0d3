from pathlib import Path

TARGET = Path("/app/crontab.txt")
DAYS = {"mon": "1"}


def field(text):
    text = text.lower()
    text = DAYS.get(text, text)
    return str(int(text)) if text.isdigit() else text


def entries():
    assert TARGET.is_file(), "/app/crontab.txt does not exist"
    found = set()
    for line in TARGET.read_text().splitlines():
        if not line.strip() or line.lstrip().startswith("#"):
            continue
        parts = line.split(None, 5)
        assert len(parts) == 6, f"not a crontab entry (five time fields and a command): {line!r}"
        found.add((*map(field, parts[:5]), parts[5].strip()))
    return found


def test_entries():
    expected = {("30", "2", "*", "*", "*", "/app/backup.sh"), ("0", "9", "*", "*", "1", "/app/report.sh")}
    got = entries()
    assert got == expected, f"crontab entries (minute, hour, day, month, weekday, command) are {sorted(got)}, expected {sorted(expected)}"
