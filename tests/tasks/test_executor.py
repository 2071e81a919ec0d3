"""tasks/executor.py: rollout specs carry the harness as a git tree (any commit, materialised
from its blobs), the local executor runs them on this machine's threads, and execute() alone
writes each result once. The code agent is the scripted model playing the e2e agent (tests/fixtures)."""
from __future__ import annotations

import socket
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest

from evoharness.tasks.executor import HarnessTree, LocalExecutor, RolloutSpec, execute, rollout_specs
from evoharness.tasks.results import Outcome, RolloutResult
from evoharness.tasks.runner import plan_rollouts
from evoharness.tasks.sandbox.bwrap import BwrapSandbox
from evoharness.tasks.task import load_suite
from tests.fixtures.e2e_agents import HELPFUL_RULE, solve_rule, write_script
from evoharness.workspace.edits import AppendRule
from evoharness.workspace.repo import HarnessRepo

from .conftest import needs_bwrap

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"


@pytest.fixture
def model(tmp_path: Path) -> str:
    """A code agent that solves a task only when its harness has the helpful rule."""
    return write_script(tmp_path / "agents.yaml", [solve_rule(has=[HELPFUL_RULE])])


@pytest.fixture
def repo(tmp_path: Path) -> HarnessRepo:
    return HarnessRepo.create(tmp_path / "workspace")


def probe_commit(repo: HarnessRepo) -> str:
    """A commit with the helpful rule that the workspace is not at: a probe of one change."""
    seed = repo.head()
    AppendRule(text=HELPFUL_RULE).apply(repo.path)
    probe = repo.commit_change("probe: the helpful rule", change_id="probe-1",
                               component="system_prompt")
    repo.reset_hard(seed)
    return probe


def specs_for(tree: HarnessTree, iteration: int = 0, model: str = "scripted:done",
              **options) -> list[RolloutSpec]:
    plan = plan_rollouts(load_suite(SUITE).items(), attempts=2)
    return rollout_specs(plan, run_id="r", iteration=iteration, harness=tree, model=model,
                         **options)


def test_a_tree_is_its_commit_not_the_workspaces_files(repo: HarnessRepo) -> None:
    (repo.path / "notes.txt").write_text("an uncommitted file")
    head = HarnessTree.at(repo)
    assert head.commit == repo.head()
    assert head.tree == HarnessTree.at(repo, "seed").tree  # the commit's tree, not the files


@needs_bwrap
def test_a_probe_runs_without_being_checked_out(repo: HarnessRepo, tmp_path: Path,
                                                model: str) -> None:
    probe = HarnessTree.at(repo, probe_commit(repo))
    executor = LocalExecutor(workers=2, rollout_timeout=60, sandbox_factory=BwrapSandbox.for_task)
    specs = specs_for(probe, model=model) + specs_for(HarnessTree.at(repo), 1, model=model)[:1]

    paths = execute(executor, specs, tmp_path / "out")

    results = [RolloutResult.model_validate_json(p.read_text()) for p in paths]
    *on_probe, on_head = results
    assert len(on_probe) == 6 and {r.outcome for r in on_probe} == {Outcome.PASS}
    assert {r.harness_commit for r in on_probe} == {probe.commit}
    assert on_head.outcome == Outcome.FAIL and on_head.harness_commit == repo.head()
    assert {r.node for r in results} == {socket.gethostname()}
    assert repo.head() == repo.log()[0].sha and not repo.is_dirty()  # the workspace untouched


class Replaying:
    """An executor (test double) that returns given results in a given order."""

    def __init__(self, results: list[RolloutResult]) -> None:
        self.given = results

    def results(self, specs: Sequence[RolloutSpec]) -> Iterator[RolloutResult]:
        yield from self.given


def test_execute_writes_each_result_once_as_it_arrives(repo: HarnessRepo, tmp_path: Path) -> None:
    specs = specs_for(HarnessTree.at(repo))[:3]
    done = [RolloutResult(**s.base(), outcome=Outcome.FAIL) for s in specs]
    twice = done[0].model_copy(update={"outcome": Outcome.PASS})
    shown: list[str] = []

    paths = execute(Replaying([done[2], done[0], twice, done[1]]), specs, tmp_path / "out",
                    progress=lambda r: shown.append(r.rollout_id))

    assert [p.stem for p in paths] == [s.rollout_id for s in specs]
    assert shown == [done[2].rollout_id, done[0].rollout_id, done[1].rollout_id]
    first = RolloutResult.model_validate_json(paths[0].read_text())
    assert first.outcome == Outcome.FAIL  # the repeat was not recorded
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths)


def test_specs_name_their_rollouts_and_skip_stored_ones(repo: HarnessRepo) -> None:
    specs = specs_for(HarnessTree.at(repo), skip={"it000-write-beta-a01"})
    ids = [s.rollout_id for s in specs]
    assert len(ids) == 5 and "it000-write-beta-a01" not in ids
    assert ids[:3] == ["it000-write-alpha-a00", "it000-write-beta-a00", "it000-write-gamma-a00"]
