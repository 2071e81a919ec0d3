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
    text = read('/app/settings.json')
    try:
        found = json.loads(text)
    except ValueError as error:
        raise AssertionError(f"/app/settings.json is not valid JSON: {error}")
    expected = {'name': 'auth', 'port': 9978, 'debug': True, 'retries': 5, 'log_level': 'info', 'cache': {'enabled': False, 'ttl': 137}}
    assert found == expected, f"/app/settings.json should hold {expected!r}, found {found!r}"
