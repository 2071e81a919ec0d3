"""Regression tests for resuming after a SIGKILL inside git (found by tests/faults/test_kill_resume):
stale git lock files are cleared at open (the run lock proves nobody else works on the run), and
a half-applied revert is set aside before REVERT."""
from __future__ import annotations

from pathlib import Path

from evoharness.evolve.config import RunConfig
from evoharness.evolve.ledger import Phase
from evoharness.evolve.recovery import prepare_workspace
from evoharness.evolve.run import init_run, open_run

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"


def make_run(tmp_path: Path) -> Path:
    return init_run(tmp_path / "run", RunConfig(run_id="r", tasks=SUITE,
                                                model="scripted:done")).root


def test_open_run_removes_git_locks_a_killed_process_left(tmp_path: Path) -> None:
    git_dir = make_run(tmp_path) / "workspace" / ".git"
    locks = [git_dir / "HEAD.lock", git_dir / "index.lock", git_dir / "refs" / "heads" / "x.lock"]
    for lock in locks:
        lock.write_text("")
    with open_run(tmp_path / "run") as run:
        run.repo.tag("after-kill")  # a ref write: fails while HEAD.lock / ref locks remain
    assert not any(lock.exists() for lock in locks)


def test_a_half_applied_revert_is_kept_aside_before_revert_runs(tmp_path: Path) -> None:
    run_dir = make_run(tmp_path)
    prompt = run_dir / "workspace" / "system_prompt.md.j2"
    prompt.write_text("half a revert\n")
    said: list[str] = []
    with open_run(run_dir) as run:
        head = run.repo.head()
        prepare_workspace(run, 1, Phase.REVERT, said.append)
        assert not run.repo.is_dirty() and run.repo.head() == head
    assert said and "recovered/" in said[0]
