"""The executor seam: the loop plans a batch of rollout specs (task, harness tree, model, attempt)
and an executor runs them; the calling process alone writes their result files. `local` runs them
on this machine's thread pool (runner.py), `ray` on a Ray cluster (ray_executor.py, imported only
when chosen). What a rollout does is runner.py's; storing results is traces/'."""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Literal, Protocol

from pydantic import BaseModel, ConfigDict

from evoharness.agent.clients import make_model
from evoharness.agent.model import Model
from evoharness.tasks.sandbox.environments import EnvironmentSettings, Environments, environments
from evoharness.tasks.results import RolloutResult, Split, TrialArm, rollout_id
from evoharness.tasks.runner import (
    Planned, SandboxFactory, in_pool, result_base, rollout, write_results,
)
from evoharness.tasks.task import Task
from evoharness.workspace.repo import HarnessRepo
from evoharness.workspace.spec import LoadedHarness
from evoharness.workspace.validate import load_harness

ExecutorKind = Literal["local", "ray"]
Progress = Callable[[RolloutResult], None]


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

    @property
    def rollout_id(self) -> str:
        return rollout_id(self.iteration, self.task.id, self.attempt, self.trial_change,
                          self.trial_arm)

    def base(self) -> dict:
        """The fields its result starts from."""
        return result_base(self.run_id, self.iteration, self.task, self.split, self.attempt,
                           self.harness.commit, self.trial_change, self.trial_arm)


def rollout_specs(plan: Sequence[Planned], *, run_id: str, iteration: int, harness: HarnessTree,
                  model: str, skip: set[str] | frozenset[str] = frozenset(),
                  keep_left: bool = False) -> list[RolloutSpec]:
    """The specs of a plan (runner.plan_rollouts), less the rollouts in `skip`."""
    specs = [RolloutSpec(run_id=run_id, iteration=iteration, task=task, split=split,
                         attempt=attempt, harness=harness, model=model, keep_left=keep_left)
             for task, split, attempt in plan]
    return [s for s in specs if s.rollout_id not in skip]


class Executor(Protocol):
    def results(self, specs: Sequence[RolloutSpec]) -> Iterator[RolloutResult]:
        """Each spec's result once, in the order they finish; a failure inside a rollout is an
        infra_error result, never an exception."""
        ...


def execute(executor: Executor, specs: Sequence[RolloutSpec], out_dir: Path,
            progress: Progress | None = None) -> list[Path]:
    """Run `specs` on `executor`; this process writes each result file as it arrives and shows
    it. Returns the files in spec order."""
    written = write_results(executor.results(specs), out_dir, progress)
    return [written[spec.rollout_id] for spec in specs]


class LocalExecutor:
    """Rollouts on this machine: `workers` threads; each harness tree is materialised and loaded,
    and each model's client made, once per batch; with an Environments factory, every task's
    image is built (or found cached) before the batch's first rollout."""

    def __init__(self, *, workers: int, rollout_timeout: float | None,
                 sandbox_factory: SandboxFactory,
                 model_factory: Callable[[str], Model] | None = None) -> None:
        self.workers = workers
        self.rollout_timeout = rollout_timeout
        self.sandbox_factory = sandbox_factory
        # The embedded server gets one slot per worker, so each rollout keeps its prompt cache.
        self.model_factory = model_factory or partial(make_model, workers=workers)

    def results(self, specs: Sequence[RolloutSpec]) -> Iterator[RolloutResult]:
        if isinstance(self.sandbox_factory, Environments):
            self.sandbox_factory.prepare([s.task for s in specs]).raise_problems()
        with tempfile.TemporaryDirectory(prefix="evo-harness-") as scratch:
            harnesses = {s.harness.tree: load_tree(s.harness, Path(scratch)) for s in specs}
            models = {s.model: self.model_factory(s.model) for s in specs}

            def work(spec: RolloutSpec) -> RolloutResult:
                return rollout(harnesses[spec.harness.tree], models[spec.model], spec.task,
                               spec.base(), sandbox_factory=self.sandbox_factory,
                               rollout_timeout=self.rollout_timeout, keep_left=spec.keep_left)

            yield from in_pool(specs, work, self.workers)


def load_tree(tree: HarnessTree, scratch: Path) -> LoadedHarness:
    """Validate a harness tree, materialised under `scratch` (a ValidationFailed names what is
    wrong before any rollout runs)."""
    return load_harness(tree.materialise(scratch / tree.tree))


def make_executor(kind: ExecutorKind, *, workers: int, rollout_timeout: float | None,
                  unsafe_no_sandbox: bool, ray_address: str | None = None,
                  environment: EnvironmentSettings = EnvironmentSettings()) -> Executor:
    """The executor a run's config names, running each task where `environment` says (on this
    host, or in its image). Ray is imported only here, only when chosen."""
    if kind == "ray":
        from evoharness.tasks.ray_executor import RayExecutor

        return RayExecutor(address=ray_address, workers=workers,
                           rollout_timeout=rollout_timeout, unsafe_no_sandbox=unsafe_no_sandbox,
                           environment=environment)
    return LocalExecutor(workers=workers, rollout_timeout=rollout_timeout,
                         sandbox_factory=environments(environment, unsafe_no_sandbox))
