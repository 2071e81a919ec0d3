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
    text = read('/app/feature_flags.json')
    try:
        found = json.loads(text)
    except ValueError as error:
        raise AssertionError(f"/app/feature_flags.json is not valid JSON: {error}")
    expected = {'name': 'uploads', 'port': 3586, 'debug': True, 'retries': 2, 'log_level': 'info', 'cache': {'enabled': True, 'ttl': 125}}
    assert found == expected, f"/app/feature_flags.json should hold {expected!r}, found {found!r}"
