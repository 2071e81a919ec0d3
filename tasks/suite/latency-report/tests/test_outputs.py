import json
from pathlib import Path

TARGET = Path("/app/latency.json")
EXPECTED = {'/health': {'count': 28, 'errors': 5, 'p95_ms': 56}, '/api/users': {'count': 34, 'errors': 6, 'p95_ms': 795}, '/api/items': {'count': 33, 'errors': 4, 'p95_ms': 745}, '/api/orders': {'count': 25, 'errors': 7, 'p95_ms': 858}}


def load():
    assert TARGET.is_file(), "/app/latency.json does not exist"
    return json.loads(TARGET.read_text())


def test_paths():
    got = sorted(load())
    assert got == sorted(EXPECTED), f"paths in latency.json are {got}, expected {sorted(EXPECTED)} (query strings stripped)"


def test_counts_and_errors():
    data = load()
    for path, want in EXPECTED.items():
        got = data.get(path, {})
        assert (got.get("count"), got.get("errors")) == (want["count"], want["errors"]), (
            f"{path}: count/errors are {got.get('count')}/{got.get('errors')}, expected {want['count']}/{want['errors']}")


def test_p95():
    data = load()
    for path, want in EXPECTED.items():
        got = data.get(path, {}).get("p95_ms")
        assert got == want["p95_ms"], f"{path}: p95_ms is {got}, expected {want['p95_ms']} (nearest rank)"
