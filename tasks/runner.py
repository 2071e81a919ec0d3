"""The rollout runner: one rollout in a fresh sandbox (agent, then verifier), k attempts per task
over N worker threads, each RolloutResult written atomically to one JSON file by the calling
process. A failure inside a rollout becomes an infra_error result; it never ends the run. Where
rollouts run (this process or a cluster) is executor.py's; storing results is traces/'."""
from __future__ import annotations

import socket
import threading
import time
import traceback
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor, as_completed
from pathlib import Path
from typing import Any, TypeVar

from evoharness.agent.environment import ExecResult
from evoharness.agent.events import Event, ListSink, ModelTotals
from evoharness.agent.exits import CommandExit, ExitReason, machine_spent
from evoharness.agent.loop import AgentResult, run_agent
from evoharness.agent.clients.seeded import SeededCalls
from evoharness.agent.model import Message, Model, ModelError, ModelReply
from evoharness.files import write_model
from evoharness.tasks.left_behind import LeftBehind, capture
from evoharness.tasks.results import Outcome, RolloutResult, Split, TrialArm, rollout_id, sampling_key
from evoharness.tasks.sandbox.protocol import Sandbox, SandboxFactory
from evoharness.tasks.task import Task
from evoharness.tasks.sandbox.unsafe import require_sandbox
from evoharness.tasks.verifier import VerifierResult, verify
from evoharness.workspace.spec import LoadedHarness

Planned = tuple[Task, Split, int]
T = TypeVar("T")
NODE = socket.gethostname()  # the machine a rollout ran on, recorded in its result
GRACE_SECONDS = 5.0  # beyond the agent's own wall budget, for the step in flight to end
INFRA_RERUNS = 2  # a rollout that ends infra_error runs again, at most this many more times


class _Guarded:
    """The agent's view of the sandbox: after the watchdog fires, a still-running agent thread
    can no longer touch the files the verifier is about to read."""

    def __init__(self, sandbox: Sandbox) -> None:
        self.sandbox = sandbox
        self.closed = False
        self.sandbox_error = ""

    def run_python(self, script: str, stdin: str, *, timeout: float) -> ExecResult:
        if self.closed:
            return ExecResult(exit_code=-1, output="rollout is over",
                              exit_reason=CommandExit.SANDBOX_ERROR)
        result = self.sandbox.run_python(script, stdin, timeout=timeout)
        if result.exit_reason == CommandExit.SANDBOX_ERROR:
            self.sandbox_error = result.output.strip()[:500]
        return result


class _Stoppable:
    """The agent's model: after the watchdog fires, a still-running agent thread gets no more
    model calls (the one in flight ends on its own), so an abandoned rollout stops taking a
    model slot from the live ones and leaves no call running when the process exits."""

    def __init__(self, model: Model, guard: _Guarded) -> None:
        self.model = model
        self.name = getattr(model, "name", "")
        self.constrains_by_default = model.constrains_by_default
        self.guard = guard

    def chat(self, messages: list[Message], **options: Any) -> ModelReply:
        if self.guard.closed:
            raise ModelError("the rollout is over", kind="permanent", field="rollout_timeout")
        return self.model.chat(messages, **options)


def plan_rollouts(tasks: Sequence[tuple[Task, Split]], attempts: int) -> list[Planned]:
    """Every (task, split, attempt) for k attempts, attempts interleaved so early results
    cover every task."""
    return [(task, split, a) for a in range(attempts) for task, split in tasks]


def _deadline(harness: LoadedHarness, task: Task, rollout_timeout: float | None) -> float:
    if rollout_timeout is not None:
        return rollout_timeout
    return min(harness.spec.settings.budgets.wall_seconds, task.config.agent.timeout_sec) + GRACE_SECONDS


def _run_agent_watched(harness, model, env, task, sink, deadline) -> AgentResult | None:
    """run_agent in a daemon thread; None when the watchdog deadline passes first."""
    box: dict[str, object] = {}

    def target() -> None:
        try:
            box["result"] = run_agent(harness, model, env, task.instruction, sink)
        except BaseException as error:  # re-raised in the worker, which records it
            box["error"] = error

    thread = threading.Thread(target=target, daemon=True, name=f"agent-{task.id}")
    thread.start()
    thread.join(deadline)
    if thread.is_alive():
        return None
    if "error" in box:
        raise box["error"]  # type: ignore[misc]
    return box["result"]  # type: ignore[return-value]


def _outcome(agent: AgentResult | None, guard: _Guarded, check: VerifierResult,
             totals: ModelTotals, deadline: float) -> tuple[Outcome, str]:
    if agent is None:  # the watchdog stopped it at `deadline`
        stalled = machine_spent(totals.stall_s, deadline)
        return Outcome.TIMEOUT, ExitReason.MODEL_STALLED if stalled else ExitReason.ROLLOUT_TIMEOUT
    if agent.exit_reason == ExitReason.MODEL_UNAVAILABLE:
        return Outcome.INFRA_ERROR, ExitReason.MODEL_UNAVAILABLE
    if guard.sandbox_error or check.exit_reason == CommandExit.SANDBOX_ERROR:
        detail = guard.sandbox_error or check.output_tail[-300:]
        return Outcome.INFRA_ERROR, ExitReason.SANDBOX_ERROR.detailed(detail)
    if agent.exit_reason in (ExitReason.WALL_TIME, ExitReason.MODEL_STALLED):
        return Outcome.TIMEOUT, agent.exit_reason
    return (Outcome.PASS if check.passed else Outcome.FAIL), agent.exit_reason


def run_one(harness: LoadedHarness, model: Model, task: Task, sandbox_factory: SandboxFactory,
            deadline: float, base: dict, sink: ListSink,
            keep_left: Callable[[LeftBehind], None] | None = None) -> RolloutResult:
    """One rollout: agent in a fresh sandbox under a watchdog, then the verifier; its events go to
    `sink`, which the caller keeps if this raises. With `keep_left`, what the agent left is given
    to it after the agent stopped (its processes killed) and before the verifier starts."""
    sandbox = sandbox_factory(task, harness_dir=harness.root)
    try:
        guard = _Guarded(sandbox)
        agent = _run_agent_watched(harness, _Stoppable(model, guard), guard, task, sink,
                                   deadline)
        guard.closed = True
        if keep_left is not None:
            sandbox.kill_leftovers()  # the verifier's handover would; now nothing changes /app
            # A container's /app starts as its image's (built files included), not environment/.
            start = getattr(sandbox, "start_dir", None)
            keep_left(capture(start or task.environment_dir, sandbox.app_dir,
                              summary=agent.final if agent else "",
                              ended=agent.exit_reason if agent else ExitReason.ROLLOUT_TIMEOUT,
                              whole=start is not None))
        check = verify(task, sandbox)
    finally:
        sandbox.close()
    totals = ModelTotals.of(sink.events)
    outcome, reason = _outcome(agent, guard, check, totals, deadline)
    used = agent or AgentResult.from_events(ExitReason.ROLLOUT_TIMEOUT, sink.events)
    return RolloutResult(**base, outcome=outcome, reward=check.reward, exit_reason=reason,
                         tokens_in=used.tokens_in, tokens_out=used.tokens_out, steps=used.steps,
                         verifier_tail=check.output_tail, model_time=totals,
                         events=list(sink.events))


def infra_error(base: dict, error: BaseException | str, sink: ListSink | None = None
                ) -> RolloutResult:
    """The rollout as far as it got: why it could not finish, and every event recorded before
    (its steps and tokens counted from them)."""
    if isinstance(error, BaseException):
        last = traceback.format_exception_only(type(error), error)[-1].strip()
        error = ExitReason.EXCEPTION.detailed(last)
    events = list(sink.events) if sink else []
    used = AgentResult.from_events(ExitReason.EXCEPTION, events)
    return RolloutResult(**base, outcome=Outcome.INFRA_ERROR, exit_reason=error, events=events,
                         steps=used.steps, tokens_in=used.tokens_in, tokens_out=used.tokens_out,
                         model_time=ModelTotals.of(events))


def result_base(run_id: str, iteration: int, task: Task, split: Split, attempt: int,
                harness_commit: str, trial_change: str = "", trial_arm: TrialArm = "") -> dict:
    """The fields every result of one planned rollout starts from."""
    return dict(rollout_id=rollout_id(iteration, task.id, attempt, trial_change, trial_arm),
                run_id=run_id, iteration=iteration, task_id=task.id, split=split,
                attempt=attempt, harness_commit=harness_commit, started_at=time.time(),
                node=NODE, trial_change=trial_change, trial_arm=trial_arm)


def bound_to_rollout(client: Model, base: dict) -> Model:
    """The client this rollout talks to. A client whose replies draw on chance (a test double
    with known pass probabilities) binds to the rollout by `for_rollout(key)`, keyed by run and
    rollout id, so the same rollout draws the same way wherever and whenever it runs again."""
    bind = getattr(client, "for_rollout", None)
    return bind(f"{base['run_id']}/{base['rollout_id']}") if bind else client


def seeded_for_rollout(client: Model, base: dict) -> Model:
    """The rollout's client, each call carrying a sampling seed from the rollout's sampling key
    (SeededCalls): the same for both arms of a trial's pair."""
    key = sampling_key(base["iteration"], base["task_id"], base["attempt"], base["trial_change"])
    return SeededCalls(bound_to_rollout(client, base), f"{base['run_id']}/{key}")


def rollout(harness: LoadedHarness, model: Model | Callable[[], Model], task: Task, base: dict,
            *, sandbox_factory: SandboxFactory, rollout_timeout: float | None,
            keep_left: bool = False) -> RolloutResult:
    """One rollout that never raises: a failure inside it is an infra_error result. One that
    ends infra_error is run again, up to INFRA_RERUNS times (an infra error is left out of pass
    rates, so a harness must not be able to earn one cheaply); the result kept is the last, with
    a note of each earlier try. A model server that did not answer is not run again here: the
    phase sets such rollouts aside and stops (evolve/rollouts.py). `keep_left`: the result
    carries what the agent left, captured before the verifier ran (kept when the verifier fails
    too, so whether it is there says nothing about the verifier)."""
    start = time.monotonic()
    earlier: list[RolloutResult] = []
    while True:
        result = _try_once(harness, model, task, base, sandbox_factory, rollout_timeout,
                           keep_left)
        if (result.outcome != Outcome.INFRA_ERROR or len(earlier) == INFRA_RERUNS
                or result.exit_reason == ExitReason.MODEL_UNAVAILABLE):
            break
        earlier.append(result)
    return result.model_copy(update={"duration_s": time.monotonic() - start,
                                     "events": result.events + _rerun_notes(result, earlier)})


def _try_once(harness: LoadedHarness, model: Model | Callable[[], Model], task: Task, base: dict,
              sandbox_factory: SandboxFactory, rollout_timeout: float | None,
              keep_left: bool) -> RolloutResult:
    sink = ListSink()
    left: list[LeftBehind] = []
    try:
        client = seeded_for_rollout(model if hasattr(model, "chat") else model(), base)
        base = {**base, "model": getattr(client, "name", "")}
        result = run_one(harness, client, task, sandbox_factory,
                         _deadline(harness, task, rollout_timeout), base, sink,
                         left.append if keep_left else None)
    except Exception as error:  # one broken rollout is data, not the end of the run
        result = infra_error(base, error, sink)
    return result.model_copy(update={"left": left[0] if left else None})


def _rerun_notes(result: RolloutResult, earlier: list[RolloutResult]) -> list[Event]:
    """One note per try that ended infra_error before the kept one: why, and how far it got."""
    seq = max((e.seq for e in result.events), default=-1) + 1
    return [Event(seq=seq + n, kind="note", name="infra_rerun",
                  content=f"try {n + 1} ended infra_error ({r.exit_reason[:300]}) after "
                          f"{len(r.events)} events; the rollout was run again",
                  data={"try": n + 1, "exit_reason": r.exit_reason[:300],
                        "events": len(r.events), "steps": r.steps})
            for n, r in enumerate(earlier)]


def in_pool(items: Sequence[T], work: Callable[[T], RolloutResult], workers: int
            ) -> Iterator[RolloutResult]:
    """`work` over `items` on `workers` threads; results in the order they finish. When the
    consumer stops (Ctrl-C, an error, it stops reading), the items not started never start:
    leaving the pool's `with` waited for every queued rollout, so a Ctrl-C of a measurement or a
    run went on for hours. A Ctrl-C (or evoharness's SIGTERM) that comes while this waits, as the
    consumer mostly does, first hands on the results of those in flight, so their model time is
    kept; a second one stops at once. Otherwise those in flight end on their own, unread."""
    pool = ThreadPoolExecutor(max_workers=max(1, workers), thread_name_prefix="rollout")
    futures = [pool.submit(work, item) for item in items]
    finished = as_completed(futures)
    handed: set[Future[RolloutResult]] = set()
    try:
        while True:
            try:
                done = next(finished)
            except StopIteration:
                return
            except KeyboardInterrupt:
                pool.shutdown(wait=False, cancel_futures=True)
                in_flight = [f for f in futures if f not in handed and not f.cancelled()]
                for done in as_completed(in_flight):
                    if done.exception() is None:
                        yield done.result()
                raise
            handed.add(done)
            yield done.result()
    finally:
        pool.shutdown(wait=False, cancel_futures=True)


def write_results(results: Iterable[RolloutResult], out_dir: Path,
                  progress: Callable[[RolloutResult], None] | None = None) -> dict[str, Path]:
    """Each result to its own file as it arrives (the run's only writer of rollout files), then
    shown; returns the files by rollout id. A rollout id seen twice keeps its first result."""
    written: dict[str, Path] = {}
    for result in results:
        if result.rollout_id in written:
            continue
        path = Path(out_dir) / f"{result.rollout_id}.json"
        written[result.rollout_id] = write_model(path, result)
        if progress is not None:
            progress(result)
    return written


def run_rollouts(harness: LoadedHarness, harness_commit: str, tasks: Sequence[tuple[Task, Split]],
                 model: Model | Callable[[], Model], *, run_id: str, iteration: int,
                 out_dir: Path, attempts: int = 1, plan: list[Planned] | None = None,
                 workers: int = 1, rollout_timeout: float | None = None,
                 skip: set[str] | frozenset[str] = frozenset(),
                 sandbox_factory: SandboxFactory | None = None,
                 progress: Callable[[RolloutResult], None] | None = None,
                 keep_left: bool = False) -> list[Path]:
    """Run every planned rollout not in `skip` on one loaded harness in this process; returns the
    result files written, in plan order.

    `model` is one shared client or a factory called once per rollout (for clients that are not
    thread-safe). `plan` overrides `tasks` x `attempts` (e.g. extra attempts of one task).
    `sandbox_factory` defaults to bubblewrap (refused when it is not installed); `keep_left` as
    for `rollout`."""
    factory = sandbox_factory or require_sandbox()
    todo = [p for p in (plan or plan_rollouts(tasks, attempts))
            if rollout_id(iteration, p[0].id, p[2]) not in skip]

    def work(item: Planned) -> RolloutResult:
        task, split, attempt = item
        base = result_base(run_id, iteration, task, split, attempt, harness_commit)
        return rollout(harness, model, task, base, sandbox_factory=factory,
                       rollout_timeout=rollout_timeout, keep_left=keep_left)

    written = write_results(in_pool(todo, work, workers), out_dir, progress)
    return [written[rollout_id(iteration, task.id, attempt)] for task, _, attempt in todo]
