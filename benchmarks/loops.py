"""What the repeat budget (settings.budgets.repeated_steps, agent/budget.py) saves, read from a
recorded measurement: each rollout's steps go through the budget's own counter, as the model read
them, and the time after the step where the budget ends the rollout is what it would not spend.
What came before that step is the same with or without the budget, so this is exact for time; the
outcome could differ only where the rollout left its loop (counted) or where running the looped
command again changed /app (say which, by reading `left_their_loop` and the passes).

    python benchmarks/loops.py ROLLOUTS_DIR [--repeated-steps N]

ROLLOUTS_DIR is a folder of rollout files (RolloutResult JSON): a run's `rollouts/it000`, a
measurement `benchmarks/suite.py --keep DIR` kept, or the committed fixture
benchmarks/fixtures/evolve-small/rollouts/it000 (8 train rollouts of a short real run of the
embedded 1.5B)."""
from __future__ import annotations

import argparse
from pathlib import Path

from pydantic import BaseModel

from evoharness.agent.budget import Repeats, same_step
from evoharness.agent.recorder import clip
from evoharness.tasks.results import RolloutResult
from evoharness.workspace.spec import Budgets, Settings

READ_CHARS = Settings().tool_output_chars  # the seed's, which the measurement ran


class Loop(BaseModel):
    task_id: str
    outcome: str
    ended_at_step: int  # the step after which the budget ends the rollout
    steps: int  # the steps the rollout took
    saved_s: float  # its time after that step
    left_the_loop: bool  # a later step differs from the looped one


def ended_loop(result: RolloutResult, repeated_steps: int) -> Loop | None:
    """Where the repeat budget ends this rollout, if it does."""
    repeats, call = Repeats(), None
    steps = []  # (the step as compared, when its result was recorded)
    for event in result.events:
        if event.kind == "tool_call":
            call = (event.name, event.data.get("arguments") or {})
        elif event.kind == "tool_result" and call is not None:
            # What the model read of it; the loop's "Result of <tool>:" adds nothing to compare.
            steps.append((same_step(*call, clip(event.content, READ_CHARS)), event.ts))
            call = None
    for step, (compared, at) in enumerate(steps, start=1):
        if repeats.add(compared) >= repeated_steps:
            last = max(event.ts for event in result.events)
            return Loop(task_id=result.task_id, outcome=result.outcome, ended_at_step=step,
                        steps=len(steps), saved_s=last - at,
                        left_the_loop=any(later != compared for later, _ in steps[step:]))
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("rollouts", type=Path)
    parser.add_argument("--repeated-steps", type=int, default=Budgets().repeated_steps)
    args = parser.parse_args()
    results = [RolloutResult.model_validate_json(path.read_text())
               for path in sorted(args.rollouts.glob("*.json"))]
    if not results:
        raise SystemExit(f"no rollout files in {args.rollouts}: name a rollouts folder, or keep a "
                         f"measurement there with benchmarks/suite.py --keep")
    loops = [loop for r in results if (loop := ended_loop(r, args.repeated_steps)) is not None]
    spent = sum(r.duration_s for r in results)
    saved = sum(loop.saved_s for loop in loops)
    for loop in loops:
        print(f"  {loop.task_id}: {loop.outcome}, ended after step {loop.ended_at_step} of "
              f"{loop.steps}, {loop.saved_s:.0f} s saved"
              + (", then left its loop" if loop.left_the_loop else ""))
    print(f"rollouts: {len(results)} rollouts")
    print(f"rollouts_ended: {len(loops)} rollouts")
    print(f"left_their_loop: {sum(loop.left_the_loop for loop in loops)} rollouts")
    print(f"passes_among_ended: {sum(loop.outcome == 'pass' for loop in loops)} rollouts")
    print(f"seconds_per_rollout: {spent / len(results):.1f} s")
    print(f"seconds_per_rollout_with_budget: {(spent - saved) / len(results):.1f} s")
    print(f"seconds_per_rollout_ratio: {(spent - saved) / spent:.3g} x (with / without)")


if __name__ == "__main__":
    main()
