"""Fixtures for workspace tests: a fresh copy of the seed harness, plain or under git."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from evoharness.workspace.repo import SEED_DIR, HarnessRepo


@pytest.fixture
def harness_dir(tmp_path: Path) -> Path:
    target = tmp_path / "harness"
    shutil.copytree(SEED_DIR, target, ignore=shutil.ignore_patterns("__pycache__"))
    return target


@pytest.fixture
def repo(tmp_path: Path) -> HarnessRepo:
    return HarnessRepo.create(tmp_path / "ws")
