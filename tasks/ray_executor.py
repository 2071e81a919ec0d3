"""Rollouts on a Ray cluster: one actor per worker slot, each running the same sandbox and verifier
as a local rollout on its own node, with its model clients made once. This process (the driver)
puts each task directory and harness tree in Ray's object store once per batch, hands each idle
worker one spec at a time, and yields results as they come back; a spec whose worker or node
died runs again on another worker. Writing results is executor.execute's, in this process."""
from __future__ import annotations

import logging
import os
import socket
import tempfile
from collections import Counter, deque
from dataclasses import dataclass
from collections.abc import Iterator, Sequence
from pathlib import Path

import ray
from ray.exceptions import RayError, RayTaskError

from evoharness.agent.clients import make_model
from evoharness.agent.model import Model
from evoharness.errors import EvoError
from evoharness.tasks.bundles import TASK_FILES_LEFT_BEHIND, content_key, pack_dir, unpack_cached
from evoharness.tasks.sandbox.environments import EnvironmentSettings, Environments
from evoharness.tasks.specs import RolloutSpec, load_tree
from evoharness.tasks.results import RolloutResult
from evoharness.tasks.runner import infra_error, rollout
from evoharness.tasks.sandbox.unsafe import require_sandbox
from evoharness.workspace.spec import LoadedHarness
from evoharness.workspace.validate import load_harness

# Where the model servers are: the driver's settings, so every node calls the same endpoint.
MODEL_ENV = ("OLLAMA_HOST", "OPENAI_API_KEY")
MAX_LOSSES = 3  # times one rollout may lose its worker (process or node died) before it is data
CONNECT_TIMEOUT_S = 10.0
PENDING_WARNING_S = 60.0  # waiting this long with no worker placed: say why the run is idle
ADDRESS_HINT = ("start one with `ray start --head`, or fix the address (run.yaml ray_address, "
                "--ray-address or RAY_ADDRESS)")

log = logging.getLogger(__name__)
Files = dict[str, tuple[str, ray.ObjectRef]]  # "task"/"harness" -> (cache key, archive)


def connect(address: str | None) -> None:
    """Join the cluster at `address` once per process; as with ray.init, None means RAY_ADDRESS,
    else the cluster last started on this machine, else a new local instance. A cluster that
    cannot be reached or joined is an EvoError naming the address."""
    if ray.is_initialized():
        return
    target = address or os.environ.get("RAY_ADDRESS")
    _check_reachable(target)
    try:
        ray.init(address=address)
    except (ConnectionError, RuntimeError, ValueError, RayError) as error:
        raise EvoError(f"cannot join the Ray cluster: {error}", field="ray_address",
                       value=target or "a new local instance",
                       hint=ADDRESS_HINT + "; a cluster with token authentication needs "
                            "RAY_AUTH_MODE=token and its token here too") from error


def _check_reachable(address: str | None) -> None:
    """A quick TCP check of HOST:PORT: ray.init retries an unreachable address for minutes."""
    if not address or address in ("auto", "local"):
        return
    host, _, port = address.split("://")[-1].rpartition(":")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except (OSError, ValueError) as error:
        raise EvoError(f"cannot reach the Ray cluster at {address}: {error}",
                       field="ray_address", value=address, hint=ADDRESS_HINT) from error


def node_name() -> str:
    """This worker's machine and Ray node, as recorded in each result it produces."""
    return f"{socket.gethostname()}/{ray.get_runtime_context().get_node_id()}"


@ray.remote(num_cpus=1, max_restarts=0, max_task_retries=0)
class RolloutWorker:
    """One worker slot: runs one rollout at a time; harnesses are loaded and model clients made
    (the embedded model loaded) once per worker process, never per rollout."""

    def __init__(self, rollout_timeout: float | None, unsafe_no_sandbox: bool,
                 environment: EnvironmentSettings, containers: frozenset[str]) -> None:
        self.node = node_name()
        self.rollout_timeout = rollout_timeout
        self.no_sandbox = ""
        host = None
        try:
            host = require_sandbox(unsafe_no_sandbox)
        except EvoError as error:  # each host rollout says so: this node cannot run them
            self.no_sandbox = f"sandbox_error: {error.message} on node {self.node}"
        try:  # the driver decided which tasks run in their image; this node builds its own
            self.sandbox = Environments(environment, host, containers=containers)
        except EvoError as error:
            self.sandbox = None
            self.no_sandbox = f"sandbox_error: {error.message} on node {self.node}"
        self.harnesses: dict[str, LoadedHarness] = {}
        self.models: dict[str, Model] = {}

    def ready(self) -> str:
        return self.node

    def run(self, spec: RolloutSpec, files: Files) -> RolloutResult:
        base = {**spec.base(), "model": spec.model, "node": self.node}
        if self.sandbox is None or (self.no_sandbox and not self.sandbox.in_container(spec.task)):
            return infra_error(base, self.no_sandbox)
        try:
            task_dir = _unpacked(files["task"])
            harness = spec.harness_for(self._harness(files["harness"]))
        except Exception as error:  # files that did not arrive or unpack: this rollout's data
            return infra_error(base, error)
        task = spec.task.model_copy(update={"root": task_dir})
        return rollout(harness, lambda: self._model(spec.model), task, base,
                       sandbox_factory=self.sandbox, rollout_timeout=self.rollout_timeout,
                       keep_left=spec.keep_left)

    def _harness(self, file: tuple[str, ray.ObjectRef]) -> LoadedHarness:
        key = file[0]
        if key not in self.harnesses:
            self.harnesses[key] = load_harness(_unpacked(file))
        return self.harnesses[key]

    def _model(self, spec: str) -> Model:
        if spec not in self.models:
            self.models[spec] = make_model(spec)
        return self.models[spec]


def _unpacked(file: tuple[str, ray.ObjectRef]) -> Path:
    key, archive = file
    return unpack_cached(key, lambda: ray.get(archive))


class RayExecutor:
    """Rollouts on the Ray cluster at `address`, `workers` of them at a time (one CPU each)."""

    def __init__(self, *, address: str | None, workers: int, rollout_timeout: float | None,
                 unsafe_no_sandbox: bool,
                 environment: EnvironmentSettings = EnvironmentSettings()) -> None:
        self.address = address
        self.workers = workers
        self.rollout_timeout = rollout_timeout
        self.unsafe_no_sandbox = unsafe_no_sandbox
        self.environment = environment
        self.containers: frozenset[str] = frozenset()

    def results(self, specs: Sequence[RolloutSpec]) -> Iterator[RolloutResult]:
        if not specs:
            return
        self.containers = _prepare_images(self.environment, [s.task for s in specs])
        connect(self.address)
        with tempfile.TemporaryDirectory(prefix="evo-harness-") as scratch:
            for tree in {s.harness.tree: s.harness for s in specs}.values():
                load_tree(tree, Path(scratch))  # an invalid harness fails here, not on each node
        pool = _Pool(self, _put_files(specs))
        try:
            yield from pool.run(specs)
        finally:
            pool.close()

    def worker_options(self) -> dict:
        env = {name: os.environ[name] for name in MODEL_ENV if os.environ.get(name)}
        options: dict = {"scheduling_strategy": "SPREAD"}
        if env:
            options["runtime_env"] = {"env_vars": env}
        return options


def _prepare_images(environment: EnvironmentSettings, tasks: list) -> frozenset[str]:
    """Which tasks run in their image (decided here, with this machine's engine), each image
    built here before any rollout; workers on other nodes build theirs from the same files."""
    driver = Environments(environment, None)
    chosen = frozenset(t.id for t in tasks if driver.in_container(t))
    if chosen:
        driver.prepare(tasks).raise_problems()
    return chosen


def _put_files(specs: Sequence[RolloutSpec]) -> dict[str, tuple[str, ray.ObjectRef]]:
    """Each task directory and harness tree of the batch in the object store, once, by content."""
    files: dict[str, tuple[str, ray.ObjectRef]] = {}
    for spec in specs:
        task = str(spec.task.root)
        if task not in files:
            archive = pack_dir(spec.task.root, TASK_FILES_LEFT_BEHIND)
            files[task] = (f"task-{content_key(archive)}", ray.put(archive))
        tree = spec.harness.tree
        if tree not in files:
            files[tree] = (f"harness-{tree}", ray.put(spec.harness.archive()))
    return files


@dataclass(frozen=True)
class _Worker:
    actor: ray.actor.ActorHandle
    node: str


class _Pool:
    """The batch's workers. A spec is given to one ready worker at a time, so it is never run
    twice at once; if the worker dies under it, it goes back to the queue and a replacement
    worker is started (placed by Ray wherever there is room)."""

    def __init__(self, executor: RayExecutor, files: dict[str, tuple[str, ray.ObjectRef]]) -> None:
        self.executor = executor
        self.files = files
        self.actors: list[ray.actor.ActorHandle] = []
        self.starting: dict[ray.ObjectRef, ray.actor.ActorHandle] = {}
        self.running: dict[ray.ObjectRef, tuple[_Worker, RolloutSpec]] = {}
        self.idle: list[_Worker] = []
        self.replacements = executor.workers * MAX_LOSSES
        self.losses: Counter[str] = Counter()

    def run(self, specs: Sequence[RolloutSpec]) -> Iterator[RolloutResult]:
        queue = deque(specs)
        for _ in range(min(self.executor.workers, len(specs))):
            self._start()
        while queue or self.running:
            while self.idle and queue:
                self._give(self.idle.pop(), queue.popleft())
            ref = self._next_done()
            if ref in self.starting:
                self._started(ref)
                continue
            worker, spec = self.running.pop(ref)
            try:
                result = ray.get(ref)
            except RayTaskError as error:  # raised inside run(): a bug, not a lost worker
                self.idle.append(worker)
                yield infra_error(_base(spec, worker), error.cause or error)
                continue
            except RayError as error:  # the worker process or its node died (or cannot be told)
                lost = self._lost(worker, spec, error)
                if lost is None:
                    queue.appendleft(spec)
                else:
                    yield lost
                continue
            self.idle.append(worker)
            yield result

    def _start(self) -> None:
        # Build logs go to the run, on the driver; a worker keeps its own in its cache.
        settings = self.executor.environment.model_copy(update={"build_logs": None})
        actor = RolloutWorker.options(**self.executor.worker_options()).remote(
            self.executor.rollout_timeout, self.executor.unsafe_no_sandbox, settings,
            self.executor.containers)
        self.actors.append(actor)
        self.starting[actor.ready.remote()] = actor

    def _started(self, ref: ray.ObjectRef) -> None:
        actor = self.starting.pop(ref)
        try:
            node = ray.get(ref)
        except RayError as error:  # it could not start (its node died, or evoharness is missing)
            self._replace(error)
            return
        self.idle.append(_Worker(actor, node))

    def _give(self, worker: _Worker, spec: RolloutSpec) -> None:
        files = {"task": self.files[str(spec.task.root)], "harness": self.files[spec.harness.tree]}
        # Inside a dict the archives stay references: a worker fetches one only on a cache miss.
        self.running[worker.actor.run.remote(spec, files)] = (worker, spec)

    def _next_done(self) -> ray.ObjectRef:
        while True:
            done, _ = ray.wait([*self.starting, *self.running], num_returns=1,
                               timeout=PENDING_WARNING_S)
            if done:
                return done[0]
            if not self.running:
                log.warning("no Ray worker placed for %.0f s: %d wait for a free CPU "
                            "(`ray status` shows the demand)", PENDING_WARNING_S,
                            len(self.starting))

    def _lost(self, worker: _Worker, spec: RolloutSpec, error: RayError) -> RolloutResult | None:
        """Replace the worker; None to run the spec again, or its infra_error result once it
        has lost MAX_LOSSES workers."""
        ray.kill(worker.actor)  # if it lives after all, it must neither hold its CPU nor go on
        self._replace(error)
        self.losses[spec.rollout_id] += 1
        why = f"{type(error).__name__}: {str(error).splitlines()[0][:300]}"
        if self.losses[spec.rollout_id] < MAX_LOSSES:
            log.warning("worker lost mid-rollout, running it again elsewhere: %s on node %s: %s",
                        spec.rollout_id, worker.node, why)
            return None
        log.warning("worker lost mid-rollout %d times, recorded as infra_error: %s on node %s: %s",
                    MAX_LOSSES, spec.rollout_id, worker.node, why)
        return infra_error(_base(spec, worker),
                           f"worker lost {MAX_LOSSES} times, last on node {worker.node}: {why}")

    def _replace(self, error: RayError) -> None:
        self.replacements -= 1
        if self.replacements < 0:
            raise EvoError(f"Ray workers keep dying: {str(error).splitlines()[0][:300]}",
                           field="executor", value="ray",
                           hint="check `ray status` and each node's logs; every node needs "
                                "evoharness installed (with the [ray] extra) like the driver")
        self._start()

    def close(self) -> None:
        for actor in self.actors:
            ray.kill(actor)


def _base(spec: RolloutSpec, worker: _Worker) -> dict:
    """A result's fields for a rollout that ended outside the runner (on `worker`)."""
    return {**spec.base(), "model": spec.model, "node": worker.node}
