"""Running one batch of rollouts for a phase (EVAL's evaluation, a round of TRIAL): the executor the
run's config names, one result file per rollout, and rollouts the model server could not serve
set aside (not ingested) with the run stopped, so a resume runs exactly those again. Planning the
batch is the phase's; storing the results is the ledger's ingest."""
from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from pathlib import Path

from evoharness.agent.exits import ExitReason
from evoharness.errors import EvoError
from evoharness.tasks.executor import Executor, RolloutSpec, execute, make_executor
from evoharness.tasks.results import RolloutResult

from .run import Run

Progress = Callable[[RolloutResult], None]


class ModelServerDown(EvoError):
    """The model server could not be reached: stop cleanly, resume later."""


def run_batch(run: Run, specs: Sequence[RolloutSpec], out_dir: Path,
              progress: Progress | None = None) -> list[Path]:
    """Run `specs` into `out_dir` (one file each, in spec order); raise ModelServerDown, after
    moving their files aside, when the model server did not answer some of them."""
    aside = run.paths.unserved(out_dir)
    paths, unserved = execute_served(run_executor(run), specs, out_dir, aside, progress)
    if unserved:
        raise ModelServerDown(
            f"the model server did not answer in {len(unserved)} of {len(paths)} rollouts "
            f"(kept in {aside})",
            field="model", value=run.config.model,
            hint=f"start the server, then `evoharness evolve {run.paths.root} --resume`; "
                 "stored rollouts are not run again",
        )
    return paths


def execute_served(executor: Executor, specs: Sequence[RolloutSpec], out_dir: Path, aside: Path,
                   progress: Progress | None = None) -> tuple[list[Path], list[Path]]:
    """Run `specs` into `out_dir`; the files of rollouts the model server did not answer move to
    `aside` (never ingested, so the next attempt runs them again). Returns (written, set aside)."""
    unserved: list[str] = []

    def seen(result: RolloutResult) -> None:
        if result.exit_reason == ExitReason.MODEL_UNAVAILABLE:
            unserved.append(result.rollout_id)
        if progress is not None:
            progress(result)

    written = execute(executor, specs, out_dir, progress=seen) if specs else []
    return written, set_aside(out_dir, aside, unserved)


def run_executor(run: Run) -> Executor:
    config = run.config
    return make_executor(config.executor, workers=config.workers,
                         rollout_timeout=config.rollout_timeout,
                         unsafe_no_sandbox=config.unsafe_no_sandbox, ray_address=config.ray_address,
                         environment=config.environment_settings(run.paths))


def set_aside(out_dir: Path, aside: Path, rollout_ids: list[str]) -> list[Path]:
    """Move rollouts out of the ingest folder into `aside` so a resume runs them again."""
    moved = []
    for rollout in rollout_ids:
        target = aside / f"{rollout}.{int(time.time() * 1000)}.json"
        target.parent.mkdir(parents=True, exist_ok=True)
        (out_dir / f"{rollout}.json").rename(target)
        moved.append(target)
    return moved
