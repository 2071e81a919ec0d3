from pathlib import Path

SORTED = Path("/app/sorted")
INBOX = Path("/app/inbox")
ORIGINAL = {'inbox/report.PDF': 'pdf bytes\n', 'inbox/notes.txt': 'notes\n', 'inbox/readme.TXT': 'read me\n', 'inbox/photo.jpg': 'jpeg 1\n', 'inbox/Photo2.JPG': 'jpeg 2\n', 'inbox/data.tar.gz': 'archive\n', 'inbox/Makefile': 'all:\n\ttrue\n', 'inbox/script.py': 'print("hi")\n'}
EXPECTED = ['gz/data.tar.gz', 'jpg/Photo2.JPG', 'jpg/photo.jpg', 'noext/Makefile', 'pdf/report.PDF', 'py/script.py', 'txt/notes.txt', 'txt/readme.TXT']


def test_inbox_empty():
    assert INBOX.is_dir(), "/app/inbox must still exist"
    left = sorted(p.name for p in INBOX.iterdir())
    assert left == [], f"/app/inbox still contains {left}"


def test_sorted_layout():
    assert SORTED.is_dir(), "/app/sorted does not exist"
    found = sorted(str(p.relative_to(SORTED)) for p in SORTED.rglob("*") if p.is_file())
    assert found == EXPECTED, f"files under /app/sorted are {found}, expected {EXPECTED}"


def test_contents_preserved():
    for rel in EXPECTED:
        name = rel.split("/", 1)[1]
        got = (SORTED / rel).read_text()
        assert got == ORIGINAL["inbox/" + name], f"content of sorted/{rel} changed: {got!r}"
