from pathlib import Path

APP = Path("/app")
ARCHIVE = Path("/app/archive")
ORIGINAL = {'access.log': '10.0.0.5 - - [01/May/2024:10:01:00] "GET / HTTP/1.1" 200 512\n10.0.0.9 - - [01/May/2024:10:02:30] "GET /cart HTTP/1.1" 404 128\n', 'app.log': '2024-05-01 10:00:00 INFO app started\n2024-05-01 10:05:12 INFO user login\n', 'error.log': '2024-05-01 10:07:44 ERROR disk quota exceeded\n', 'notes.txt': 'Remember to rotate the logs every Monday.\n', 'stats.csv': 'day,requests\n2024-05-01,1520\n2024-05-02,1488\n'}
LOGS = {name: text for name, text in ORIGINAL.items() if name.endswith(".log")}
OTHERS = {name: text for name, text in ORIGINAL.items() if not name.endswith(".log")}


def test_archive_holds_exactly_the_logs():
    assert ARCHIVE.is_dir(), "/app/archive does not exist (or is not a folder)"
    names = sorted(p.name for p in ARCHIVE.iterdir())
    assert names == sorted(LOGS), f"/app/archive holds {names}, expected exactly {sorted(LOGS)}"
    for name, text in LOGS.items():
        found = (ARCHIVE / name).read_text()
        assert found == text, f"/app/archive/{name} should hold the original log {text!r}, found {found!r}"


def test_no_log_left_in_app():
    left = sorted(p.name for p in APP.glob("*.log"))
    assert left == [], f"no .log file may remain directly in /app (they must be moved), found {left}"


def test_other_files_untouched():
    for name, text in OTHERS.items():
        path = APP / name
        assert path.is_file(), f"{path} must stay in /app but is missing"
        found = path.read_text()
        assert found == text, f"{path} changed: expected {text!r}, found {found!r}"
