"""Fixtures shared by the loop's and the CLI's tests."""
from __future__ import annotations

import shutil
from pathlib import Path

import pytest


@pytest.fixture
def path_without_bwrap(tmp_path: Path) -> str:
    """A PATH with git (GitPython needs it) and no bwrap; sandboxed commands get a system PATH
    of their own."""
    tools = tmp_path / "bin"
    tools.mkdir()
    (tools / "git").symlink_to(shutil.which("git"))
    return str(tools)
