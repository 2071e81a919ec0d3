"""The executor seam: the loop plans a batch of rollout specs (task, harness tree, model, attempt)
and an executor runs them; the calling process alone writes their result files. `local` runs them
on this machine's thread pool (runner.py), `ray` on a Ray cluster (ray_executor.py, imported only
when chosen, the one way between the two: ray_executor.py takes the specs from specs.py). What a
rollout does is runner.py's; storing results is traces/'."""
from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from pathlib import Path
from typing import Literal, Protocol

from evoharness.agent.clients import make_model
from evoharness.agent.model import Model
from evoharness.tasks.sandbox.environments import EnvironmentSettings, Environments, environments
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import SandboxFactory, in_pool, rollout, write_results
# The specs live in specs.py, which the Ray executor imports too; named here for the callers.
from evoharness.tasks.specs import HarnessTree, RolloutSpec, load_tree, rollout_specs

__all__ = ["Executor", "ExecutorKind", "HarnessTree", "LocalExecutor", "RolloutSpec", "execute",
           "load_tree", "make_executor", "rollout_specs"]

ExecutorKind = Literal["local", "ray"]
Progress = Callable[[RolloutResult], None]


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
                return rollout(spec.harness_for(harnesses[spec.harness.tree]), models[spec.model],
                               spec.task, spec.base(), sandbox_factory=self.sandbox_factory,
                               rollout_timeout=self.rollout_timeout, keep_left=spec.keep_left)

            yield from in_pool(specs, work, self.workers)


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
