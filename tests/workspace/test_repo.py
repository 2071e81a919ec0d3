"""HarnessRepo against real temporary git repositories: create, commit with trailers, revert,
conflicting revert (and the inserted lines git's merge refuses to revert), tag, diff, read a file
at a commit."""
from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

from evoharness.errors import EvoError
from evoharness.workspace.repo import HarnessRepo, RevertConflict
from evoharness.workspace.validate import load_harness

MEMORY = "memory/LONG_TERM.md"


def write(repo: HarnessRepo, rel: str, text: str) -> None:
    (repo.path / rel).write_text(text)


def test_create_from_seed(repo: HarnessRepo) -> None:
    assert not repo.is_dirty()
    assert repo.log()[0].summary == "Seed harness"
    assert repo.log()[0].time.tzinfo is not None
    assert "tools/shell.py" in repo.changed_files("seed")
    load_harness(repo.path)


def test_create_refuses_non_empty_dir(tmp_path: Path) -> None:
    (tmp_path / "ws").mkdir()
    (tmp_path / "ws" / "keep.txt").write_text("x")
    with pytest.raises(EvoError, match="not empty"):
        HarnessRepo.create(tmp_path / "ws")


def test_open_non_repo(tmp_path: Path) -> None:
    with pytest.raises(EvoError, match="not a harness git repository"):
        HarnessRepo(tmp_path)


def test_commit_change_trailers_read_back(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "Prefer pytest -x.\n")
    sha = repo.commit_change("Teach memory about pytest\n\nBecause tests were slow.",
                             change_id="it1-c1", component="memory",
                             trailers={"Predicted-Fixes": "task-a,\ntask-b"})
    info = repo.log(max_count=1)[0]
    assert info.sha == sha == repo.head()
    assert info.summary == "Teach memory about pytest"
    assert info.trailers == {"Change-Id": "it1-c1", "Component": "memory",
                             "Predicted-Fixes": "task-a, task-b"}
    assert repo.changed_files(sha) == [MEMORY]
    author = subprocess.run(["git", "log", "-1", "--format=%an"], cwd=repo.path,
                            capture_output=True, text=True, check=True).stdout.strip()
    assert author == "evoharness"


def test_empty_change_is_committed(repo: HarnessRepo) -> None:
    before = repo.head()
    sha = repo.commit_change("Placebo", change_id="p1", component="memory")
    assert sha != before and repo.changed_files(sha) == []
    assert repo.tree_id(sha) == repo.tree_id(before)


def test_revert_restores_tree_and_records_reason(repo: HarnessRepo) -> None:
    seed_tree = repo.tree_id()
    write(repo, MEMORY, "bad advice\n")
    (repo.path / "notes.md").write_text("new file\n")
    sha = repo.commit_change("Bad change", change_id="c7", component="memory")
    revert = repo.revert(sha, reason="Predicted fix of task-a not observed.")
    assert repo.tree_id(revert) == seed_tree
    assert not (repo.path / "notes.md").exists()
    info = repo.commit_info(revert)
    assert info.trailers["Reverts-Change-Id"] == "c7"
    assert info.trailers["Reverts-Commit"] == sha
    assert "Predicted fix of task-a not observed." in info.message


def test_revert_of_empty_change(repo: HarnessRepo) -> None:
    sha = repo.commit_change("Placebo", change_id="p1", component="memory")
    revert = repo.revert(sha, reason="placebo")
    assert repo.tree_id(revert) == repo.tree_id(sha)


def test_conflicting_revert_raises_and_leaves_tree_clean(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "first\n")
    first = repo.commit_change("First", change_id="c1", component="memory")
    write(repo, MEMORY, "second\n")
    second = repo.commit_change("Second", change_id="c2", component="memory")
    with pytest.raises(RevertConflict) as caught:
        repo.revert(first, reason="harmful")
    assert caught.value.file == MEMORY and first[:12] in caught.value.message
    assert repo.head() == second and not repo.is_dirty()
    assert (repo.path / MEMORY).read_text() == "second\n"
    git_dir = repo.path / ".git"
    assert not (git_dir / "REVERT_HEAD").exists() and not (git_dir / "sequencer").exists()


def test_a_rule_appended_before_another_reverts_and_leaves_the_later_rule(
        repo: HarnessRepo) -> None:
    """Two rules appended one after the other: git's merge refuses to revert the first (the
    second was inserted right next to it), but the first only inserted a line, still there
    unchanged: that line goes, the later rule stays, and the revert carries its trailers."""
    prompt = "system_prompt.md.j2"
    before = (repo.path / prompt).read_text()
    write(repo, prompt, before + "- rule one\n")
    first = repo.commit_change("First", change_id="c1", component="system_prompt")
    write(repo, prompt, before + "- rule one\n- rule two\n")
    repo.commit_change("Second", change_id="c2", component="system_prompt")

    revert = repo.revert(first, reason="not shown")

    assert (repo.path / prompt).read_text() == before + "- rule two\n"
    assert repo.commit_info(revert).trailers["Reverts-Commit"] == first
    assert repo.commit_info(revert).trailers["Reverts-Change-Id"] == "c1"
    assert not repo.is_dirty()


def test_a_rule_a_later_change_rewrote_still_conflicts(repo: HarnessRepo) -> None:
    prompt = "system_prompt.md.j2"
    before = (repo.path / prompt).read_text()
    write(repo, prompt, before + "- rule one\n")
    first = repo.commit_change("First", change_id="c1", component="system_prompt")
    write(repo, prompt, before + "- rule one, amended\n- rule two\n")
    second = repo.commit_change("Second", change_id="c2", component="system_prompt")
    with pytest.raises(RevertConflict):
        repo.revert(first, reason="not shown")
    assert repo.head() == second and not repo.is_dirty()


def test_revert_refuses_dirty_tree(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "x\n")
    sha = repo.commit_change("X", change_id="c1", component="memory")
    write(repo, MEMORY, "uncommitted\n")
    with pytest.raises(EvoError, match="uncommitted"):
        repo.revert(sha, reason="r")


def test_tag_is_idempotent_but_never_moves(repo: HarnessRepo) -> None:
    repo.tag("iter-1")
    repo.tag("iter-1")
    write(repo, MEMORY, "x\n")
    repo.commit_change("X", change_id="c1", component="memory")
    with pytest.raises(EvoError, match="another commit"):
        repo.tag("iter-1")
    repo.tag("iter-2")
    assert repo.read_file(MEMORY, "iter-1") == ""
    assert repo.read_file(MEMORY, "iter-2") == "x\n"


def test_diff_between_commits_and_worktree(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "remember this\n")
    sha = repo.commit_change("Remember", change_id="c1", component="memory")
    assert "+remember this" in repo.diff("seed", sha)
    assert repo.diff(sha) == ""
    write(repo, MEMORY, "changed\n")
    assert "+changed" in repo.diff(sha)


def test_read_file_errors_name_file(repo: HarnessRepo) -> None:
    with pytest.raises(EvoError) as caught:
        repo.read_file("nope.md", "seed")
    assert caught.value.file == "nope.md"
    with pytest.raises(EvoError, match="unknown commit"):
        repo.read_file(MEMORY, "no-such-ref")


def test_reset_hard_removes_untracked(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "x\n")
    (repo.path / "tools" / "junk.py").write_text("x = 1\n")
    repo.reset_hard("seed")
    assert not repo.is_dirty() and not (repo.path / "tools" / "junk.py").exists()


def test_git_fsck_clean_after_operations(repo: HarnessRepo) -> None:
    write(repo, MEMORY, "x\n")
    sha = repo.commit_change("X", change_id="c1", component="memory")
    repo.revert(sha, reason="r")
    subprocess.run(["git", "fsck", "--strict"], cwd=repo.path, check=True, capture_output=True)


def test_a_change_applies_alone_onto_an_earlier_commit_without_touching_the_workspace(
        repo: HarnessRepo) -> None:
    base = repo.head()
    write(repo, MEMORY, "first\n")
    first = repo.commit_change("First", change_id="c1", component="memory")
    write(repo, "system_prompt.md.j2", (repo.path / "system_prompt.md.j2").read_text() + "\nx\n")
    second = repo.commit_change("Second", change_id="c2", component="system_prompt")

    assert repo.apply_alone(first, base, message="unused") == first  # already made on base
    alone = repo.apply_alone(second, base, message="c2 alone")
    assert repo.head() == second and not repo.is_dirty()  # the workspace is as it was
    assert repo.parent(alone) == base and repo.commit_info(alone).summary == "c2 alone"
    assert repo.changed_files(alone) == ["system_prompt.md.j2"]
    assert repo.read_file(MEMORY, alone) == repo.read_file(MEMORY, base)  # no sibling's edit
    assert repo.read_file("system_prompt.md.j2", alone) == repo.read_file(
        "system_prompt.md.j2", second)
    repo.set_branch("trial/c2", alone)
    assert repo.commit_info("trial/c2").sha == alone and repo.head() == second


def test_a_change_on_lines_an_earlier_change_edited_does_not_apply_alone(
        repo: HarnessRepo) -> None:
    base = repo.head()
    write(repo, MEMORY, "first\n")
    repo.commit_change("First", change_id="c1", component="memory")
    write(repo, MEMORY, "first\nsecond\n")
    second = repo.commit_change("Second", change_id="c2", component="memory")
    assert repo.apply_alone(second, base, message="c2 alone") is None
    assert repo.head() == second and not repo.is_dirty()
