"""Proving tasks: for each, the oracle (solution/solve.sh) must pass the verifier and an untouched
copy must fail it. Presenting the results is the CLI's job."""
from __future__ import annotations

import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from pydantic import BaseModel, ConfigDict

from evoharness.tasks.results import Split
from evoharness.tasks.sandbox.bwrap import Mount
from evoharness.tasks.sandbox.protocol import SandboxFactory
from evoharness.tasks.task import Task
from evoharness.tasks.verifier import VerifierResult, verify


class CheckResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    task_id: str
    split: Split | None  # None: a lone task folder, in no suite
    oracle: VerifierResult
    nothing: VerifierResult
    seconds: float

    @property
    def ok(self) -> bool:
        return self.oracle.passed and not self.nothing.passed


def _oracle(task: Task, factory: SandboxFactory) -> VerifierResult:
    sandbox = factory(task)
    try:
        if not (task.solution_dir / "solve.sh").exists():
            return VerifierResult(reward=0.0, passed=False, output_tail="no solution/solve.sh")
        run = sandbox.exec("bash /solution/solve.sh", timeout=task.config.agent.timeout_sec,
                           mounts=[Mount(source=task.solution_dir, dest="/solution")])
        result = verify(task, sandbox)
        if not result.passed:
            tail = f"solve.sh ({run.exit_reason}, exit {run.exit_code}):\n{run.output[-2000:]}\n"
            return result.model_copy(update={"output_tail": tail + result.output_tail})
        return result
    finally:
        sandbox.close()


def _nothing(task: Task, factory: SandboxFactory) -> VerifierResult:
    sandbox = factory(task)
    try:
        return verify(task, sandbox)
    finally:
        sandbox.close()


def check_task(task: Task, split: Split | None, factory: SandboxFactory) -> CheckResult:
    start = time.monotonic()
    oracle, nothing = _oracle(task, factory), _nothing(task, factory)
    return CheckResult(task_id=task.id, split=split, oracle=oracle, nothing=nothing,
                       seconds=time.monotonic() - start)


def check_tasks(items: list[tuple[Task, Split | None]], factory: SandboxFactory, *,
                workers: int = 2, progress: Callable[[CheckResult], None] | None = None
                ) -> list[CheckResult]:
    """Check every task, `workers` at a time; results in input order."""
    def one(item: tuple[Task, Split | None]) -> CheckResult:
        result = check_task(*item, factory)
        if progress is not None:
            progress(result)
        return result

    with ThreadPoolExecutor(max_workers=max(1, workers)) as pool:
        return list(pool.map(one, items))
