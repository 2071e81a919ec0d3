"""Shared pytest setup. Fixture tasks carry their own hidden tests (tests/test_*.py) that only the
verifier may run, inside a sandbox: pytest must not collect them as project tests. The slow-mark
check (tests/slow_mark.py) runs in every session."""

collect_ignore_glob = ["fixtures/tasks/*"]
pytest_plugins = ["tests.slow_mark", "pytester"]
