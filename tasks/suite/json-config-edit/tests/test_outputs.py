import json
from pathlib import Path

TARGET = Path("/app/config.json")
EXPECTED = {'name': 'shop', 'debug': False, 'server': {'host': '0.0.0.0', 'port': 9090, 'workers': 4}, 'database': {'url': 'sqlite:///shop.db', 'port': 5432}, 'features': ['search', 'cart']}


def test_config():
    assert TARGET.is_file(), "/app/config.json is missing"
    try:
        got = json.loads(TARGET.read_text())
    except ValueError as error:
        raise AssertionError(f"/app/config.json is not valid JSON any more: {error}")
    assert got == EXPECTED, f"/app/config.json holds {got}, expected {EXPECTED}"
