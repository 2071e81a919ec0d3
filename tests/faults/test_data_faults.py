"""Disk and data faults between runs: a corrupted rollout file before INGEST is quarantined, a
hand-broken manifest stops the resume with an error naming it, and uncommitted workspace edits
are kept on a recovery branch; in every case nothing already recorded is lost."""
from __future__ import annotations

from pathlib import Path

import git

from tests.fixtures.e2e_agents import done

from .conftest import (assert_clean_error, evoharness, make_run, result_files, rollouts,
                       solver_script)

ROLLOUTS = "iterations/it000/rollouts"


def test_a_corrupted_rollout_file_is_quarantined_and_the_run_goes_on(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, model=solver_script(tmp_path / "s.yaml"))
    broken = run_dir / ROLLOUTS / "it000-hello-world-a00.json"
    broken.parent.mkdir(parents=True)
    broken.write_text('{"rollout_id": "it000-hello-world-a00", "outco')  # a torn write
    result = evoharness("evolve", run_dir)
    assert result.returncode == 0, result.stderr
    assert [r[0] for r in rollouts(run_dir)] == ["it000-sum-numbers-a00"]
    kept = list((run_dir / ROLLOUTS).rglob("quarantine/*"))
    assert any(p.read_text().endswith('"outco') for p in kept), kept


def test_a_hand_broken_manifest_stops_the_resume_naming_it_and_nothing_is_lost(
        tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, model=solver_script(tmp_path / "s.yaml", done("nothing")),
                       workers=1)
    first = evoharness("evolve", run_dir, "--iterations", "1")
    assert first.returncode == 0, first.stderr
    manifest = run_dir / "manifests" / "iter-000.json"
    good = manifest.read_text()
    manifest.write_text(good[: len(good) // 2])  # edited by hand into invalid JSON
    stored = rollouts(run_dir)
    assert "it000-hello-world-a00" in {r[0] for r in stored}

    broken = evoharness("evolve", run_dir, "--iterations", "2")
    assert_clean_error(broken, "manifests/iter-000.json")
    assert manifest.read_text() == good[: len(good) // 2]  # the user's file is left as is
    assert rollouts(run_dir) == stored

    manifest.write_text(good)
    fixed = evoharness("evolve", run_dir, "--iterations", "2")
    assert fixed.returncode == 0, fixed.stderr
    assert set(rollouts(run_dir)) > set(stored)  # nothing run twice or dropped, iteration 2 added
    assert len({r[0] for r in rollouts(run_dir)}) == len(rollouts(run_dir))


def test_uncommitted_workspace_edits_at_resume_are_kept_on_a_recovery_branch(
        tmp_path: Path) -> None:
    run_dir = make_run(tmp_path, model=solver_script(tmp_path / "s.yaml"))
    repo = git.Repo(run_dir / "workspace")
    head = repo.head.commit.hexsha
    prompt = run_dir / "workspace" / "system_prompt.md.j2"
    prompt.write_text(prompt.read_text() + "\nA hand-written rule.\n")
    (run_dir / "workspace" / "notes.md").write_text("my notes")
    result = evoharness("evolve", run_dir)
    assert result.returncode == 0, result.stderr
    assert "kept on branch recovered/" in result.stdout
    branch = next(b for b in repo.branches if b.name.startswith("recovered/"))
    saved = branch.commit
    assert saved.parents[0].hexsha == head
    assert "A hand-written rule." in (saved.tree / "system_prompt.md.j2").data_stream.read().decode()
    assert (saved.tree / "notes.md").data_stream.read() == b"my notes"
    assert repo.head.commit.hexsha == head and not repo.is_dirty(untracked_files=True)
    assert len(result_files(run_dir)) == 2
