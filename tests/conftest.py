"""Shared pytest setup. Fixture tasks carry their own hidden tests (tests/test_*.py) that only the
verifier may run, inside a sandbox: pytest must not collect them as project tests."""

collect_ignore_glob = ["fixtures/tasks/*"]
