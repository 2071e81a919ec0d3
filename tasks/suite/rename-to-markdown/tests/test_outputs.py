from pathlib import Path

NOTES = Path("/app/notes")
ORIGINAL = {'notes/shopping.txt': 'milk\neggs\nbread\n', 'notes/todo.txt': '- water the plants\n- call the bank\n', 'notes/meeting notes.txt': 'Agenda: budget review\n', 'notes/ideas.txt': 'a bicycle that folds into a backpack\n', 'notes/contacts.csv': 'name,phone\nAda,555-0100\n'}
EXPECTED = {name.split("/", 1)[1].replace(".txt", ".md"): text for name, text in ORIGINAL.items()}


def test_file_names():
    names = sorted(p.name for p in NOTES.iterdir())
    assert names == sorted(EXPECTED), f"files in /app/notes are {names}, expected {sorted(EXPECTED)}"


def test_contents_unchanged():
    for name, text in EXPECTED.items():
        path = NOTES / name
        assert path.is_file(), f"{path} is missing"
        assert path.read_text() == text, f"content of {path} changed: {path.read_text()!r}"
