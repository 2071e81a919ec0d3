from pathlib import Path


def norm(text):
    """Text compared line by line, trailing spaces and trailing blank lines forgiven."""
    return "\n".join(line.rstrip() for line in text.rstrip().splitlines())


def read(path):
    path = Path(path)
    assert path.is_file(), f"{path} does not exist (or is not a file)"
    return path.read_text(errors="replace")


def test_json():
    import json
    text = read('/app/server.json')
    try:
        found = json.loads(text)
    except ValueError as error:
        raise AssertionError(f"/app/server.json is not valid JSON: {error}")
    expected = {'name': 'catalog', 'port': 6203, 'debug': True, 'retries': 5, 'log_level': 'warning', 'cache': {'enabled': False, 'ttl': 219}}
    assert found == expected, f"/app/server.json should hold {expected!r}, found {found!r}"
