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
