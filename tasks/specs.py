"""What a rollout to run is, wherever it runs: the harness as a git tree (HarnessTree), one
rollout's spec (RolloutSpec) and a plan's specs. The executors (executor.py's local one,
ray_executor.py's) both take these; neither imports the other."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoharness.tasks.results import Split, TrialArm, rollout_id
from evoharness.tasks.runner import Planned, result_base
from evoharness.tasks.task import Task
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import LoadedHarness
from evoharness.workspace.validate import load_harness


class HarnessTree(BaseModel):
    """A harness as one commit of a git repository the driver holds: `tree` (git's hash of the
    content) names what runs and keys caches, `commit` is recorded in each result. Any commit
    will do (the workspace head, or a probe: a base plus one change). Every rollout runs a copy
    made from the commit's blobs (materialise), never the workspace's checkout: an evaluation,
    either arm of a trial and a Ray node see the same files, and no .git."""

    model_config = ConfigDict(frozen=True)

    repo: Path
    commit: str
    tree: str

    @classmethod
    def at(cls, repo: HarnessRepo, commit: str = "HEAD") -> HarnessTree:
        sha = repo.commit_info(commit).sha
        return cls(repo=repo.path, commit=sha, tree=repo.tree_id(sha))

    def archive(self) -> bytes:
        return HarnessRepo(self.repo).archive(self.commit)

    def materialise(self, dest: Path) -> Path:
        """The tree's files under `dest`, readable by a sandbox's own uid."""
        HarnessRepo(self.repo).export(self.commit, dest)
        dest.chmod(0o755)
        return dest


class RolloutSpec(BaseModel):
    """One rollout to run: everything a worker on another machine needs besides the files."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    iteration: int
    task: Task
    split: Split
    attempt: int
    harness: HarnessTree
    model: str  # an agent.clients.make_model spec
    trial_change: str = ""  # set for a rollout of a change's trial, with the arm it serves
    trial_arm: TrialArm = ""
    keep_left: bool = False  # its result carries what the agent left (runner.rollout)
    temperature: float | None = None  # the harness's own unless set (best-of-N's attempts)

    @property
    def rollout_id(self) -> str:
        return rollout_id(self.iteration, self.task.id, self.attempt, self.trial_change,
                          self.trial_arm)

    def harness_for(self, loaded: LoadedHarness) -> LoadedHarness:
        """The loaded harness this rollout runs: its settings at `temperature` when set."""
        if self.temperature is None:
            return loaded
        settings = loaded.spec.settings.model_copy(update={"temperature": self.temperature})
        return loaded.model_copy(update={"spec": loaded.spec.model_copy(
            update={"settings": settings})})

    def base(self) -> dict:
        """The fields its result starts from."""
        return result_base(self.run_id, self.iteration, self.task, self.split, self.attempt,
                           self.harness.commit, self.trial_change, self.trial_arm)


def rollout_specs(plan: Sequence[Planned], *, run_id: str, iteration: int, harness: HarnessTree,
                  model: str, skip: set[str] | frozenset[str] = frozenset(),
                  keep_left: bool = False, temperatures: Sequence[float] = ()
                  ) -> list[RolloutSpec]:
    """The specs of a plan (runner.plan_rollouts), less the rollouts in `skip`. With
    `temperatures`, attempt a samples at temperatures[a % len(temperatures)]."""
    def temperature(attempt: int) -> float | None:
        return temperatures[attempt % len(temperatures)] if temperatures else None
    specs = [RolloutSpec(run_id=run_id, iteration=iteration, task=task, split=split,
                         attempt=attempt, harness=harness, model=model, keep_left=keep_left,
                         temperature=temperature(attempt))
             for task, split, attempt in plan]
    return [s for s in specs if s.rollout_id not in skip]


def load_tree(tree: HarnessTree, scratch: Path) -> LoadedHarness:
    """Validate a harness tree, materialised under `scratch` (a ValidationFailed names what is
    wrong before any rollout runs)."""
    return load_harness(tree.materialise(scratch / tree.tree))
