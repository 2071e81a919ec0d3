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
    text = read('/app/limits.json')
    try:
        found = json.loads(text)
    except ValueError as error:
        raise AssertionError(f"/app/limits.json is not valid JSON: {error}")
    expected = {'name': 'gateway', 'port': 8137, 'debug': True, 'retries': 0, 'log_level': 'info', 'cache': {'enabled': False, 'ttl': 228}}
    assert found == expected, f"/app/limits.json should hold {expected!r}, found {found!r}"
