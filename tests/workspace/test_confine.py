"""confine() and snapshot()/restore() directly: the guard every workspace write goes through."""
from __future__ import annotations

from pathlib import Path

import pytest

from evoharness.errors import EvoError
from evoharness.workspace.confine import confine, restore, snapshot


@pytest.mark.parametrize("rel", ["../a", "a/../../b", "/abs", "~/x", "", ".", ".git/HEAD",
                                 "sub/.Git/x", "a\x00b"])
def test_confine_refuses(tmp_path: Path, rel: str) -> None:
    with pytest.raises(EvoError) as caught:
        confine(tmp_path, rel)
    assert caught.value.field == "path"


def test_confine_allows_nested_new_paths(tmp_path: Path) -> None:
    assert confine(tmp_path, "skills/x/SKILL.md") == tmp_path / "skills" / "x" / "SKILL.md"


def test_confine_refuses_symlink_even_inside(tmp_path: Path) -> None:
    (tmp_path / "real").mkdir()
    (tmp_path / "alias").symlink_to(tmp_path / "real")
    with pytest.raises(EvoError, match="symlink"):
        confine(tmp_path, "alias/file.md")


def test_restore_undoes_adds_changes_deletes(tmp_path: Path) -> None:
    (tmp_path / "keep").mkdir()
    (tmp_path / "a.md").write_text("a")
    (tmp_path / "b.md").write_text("b")
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "empty").mkdir()
    before = snapshot(tmp_path)
    (tmp_path / "a.md").write_text("changed")
    (tmp_path / "b.md").unlink()
    (tmp_path / "new" / "deep").mkdir(parents=True)
    (tmp_path / "new" / "deep" / "c.md").write_text("c")
    restore(tmp_path, before)
    assert snapshot(tmp_path) == before
    assert not (tmp_path / "new").exists() and (tmp_path / "keep").is_dir()
    assert (tmp_path / ".git" / "empty").is_dir()  # git's internals are never touched
