"""Shared pytest setup. Fixture tasks carry their own hidden tests (tests/test_*.py) that only the
verifier may run, inside a sandbox: pytest must not collect them as project tests. The slow-mark
check (tests/slow_mark.py) runs in every session."""

collect_ignore_glob = ["fixtures/tasks/*"]
pytest_plugins = ["tests.slow_mark", "pytester"]

import os  # noqa: E402
import tempfile  # noqa: E402

# This machine's measured model speed (agent/clients/speed.py) is kept out of a test session's
# way: the session's runs would otherwise replace it with a test's figures, and read it back.
os.environ.setdefault("EVOHARNESS_SPEED_CACHE", tempfile.mkdtemp(prefix="evoharness-speed-"))


def pytest_collection_modifyitems(items) -> None:
    """Files holding the most slow tests first (each file's tests in their order): pytest-xdist
    hands out a file at a time in this order, so the long files start early and the quick ones
    fill the end, instead of one long file running alone while the other workers idle."""
    from collections import Counter

    slow = Counter(item.path for item in items if item.get_closest_marker("slow"))
    first_seen = {path: i for i, path in enumerate(dict.fromkeys(item.path for item in items))}
    items.sort(key=lambda item: (-slow[item.path], first_seen[item.path]))
