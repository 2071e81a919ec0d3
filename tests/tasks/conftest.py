"""Fixtures for the tasks tests: the fixture suite, the seed harness, a sandbox over a temp /app."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_task

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "tasks"

needs_bwrap = pytest.mark.skipif(shutil.which("bwrap") is None, reason="bubblewrap not installed")


@pytest.fixture
def hello_task():
    return load_task(FIXTURES / "hello-world")


@pytest.fixture
def sum_task():
    return load_task(FIXTURES / "sum-numbers")


@pytest.fixture
def seed_harness():
    from evoharness.workspace.repo import SEED_DIR
    from evoharness.workspace.validate import load_harness

    return load_harness(SEED_DIR)


@pytest.fixture
def sandbox(hello_task):
    box = BwrapSandbox.for_task(hello_task)
    yield box
    box.close()
