"""Benchmark: keep rates of changes of known kinds, end to end. Each seed is one run driven through
the CLI (`evoharness init`, `evoharness evolve`: the real loop, sandbox, verifier, store, git and
trials) with the package's scripted model as both agents: a TEST DOUBLE, not a model's result.

World (the issue's end-to-end setting): 8 train tasks that the code agent passes, under the seed
harness, with probabilities 0, .1, .2, .3, .5, .9, 1 and 1 (a seeded coin per rollout); k = 2.
In iteration i the evolve agent makes one change of each kind, each a rule appended to the
prompt with its own text (the scripted code agent reads rules, so a placebo's rule is seen and
ignored):
- helpful: +0.5 pass probability on the i-th task that passes at most half the time (a "failing"
  task), which it predicts;
- copy: a placebo predicting the helpful change's task;
- all_failing: a placebo predicting every failing task;
- harmful: +0.5 on the next failing task (predicted), and takes 0.7 off a task that always passes
  (1 -> 0.3), which it does not predict.
A kept change stays in the harness: later iterations evaluate it, and a kept harmful change leaves
its victim broken (and the next helpful change's task already raised). The first change of a
session applies alone on the harness the session started from; the others append after a
sibling's rule, so each is judged on its parent; the order rotates every iteration.

Prints per kind, each with its 95% Wilson interval and count: `verdict_keep_rate_KIND` (what the
change's own trial decided; also split by `_alone` and `_on_parent`) and `keep_rate_KIND` (what
stayed in the harness after REVERT, whose cascade can take a kept change with a rejected sibling
it textually depends on); then `kept_then_cascaded: n`, `rollouts_per_change: x` (trial rollouts
recorded, over every change), `runs_all_reverted: n` (runs in which every change was reverted:
the old rule's failure mode) and `wall_time: s`.
Run: `python benchmarks/loop_verdicts.py [--seeds N] [--iterations I (at most 4)] [--workers W]`.
"""
from __future__ import annotations

import argparse
import math
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tests.fixtures.e2e_agents import (  # noqa: E402
    NOTHING_JUDGED, change, done, evolve_rule, solve_rule, write_script,
)
from tests.fixtures.suites import write_suite  # noqa: E402

WORDS = ("amber", "birch", "cedar", "delta", "ember", "flint", "grove", "heath")
ISSUE_PASS = (0.0, 0.1, 0.2, 0.3, 0.5, 0.9, 1.0, 1.0)  # the issue's seed pass probabilities
GAIN, BREAK = 0.5, 0.7
KINDS = ("helpful", "copy", "all_failing", "harmful")


@dataclass(frozen=True)
class World:
    """Train tasks write-WORD with the seed harness's pass probabilities, and what each kind of
    change does to them."""

    passes: tuple[float, ...] = ISSUE_PASS
    kinds: tuple[str, ...] = KINDS  # the changes each session makes, in this order at iteration 0

    @property
    def words(self) -> tuple[str, ...]:
        return WORDS[:len(self.passes)]

    @property
    def failing(self) -> list[int]:
        """Tasks passing at most half the time: iteration i's helpful change targets the i-th,
        its harmful change the next (so no task is targeted twice unless a harmful one is kept)."""
        return [i for i, p in enumerate(self.passes) if p <= 0.5]

    @property
    def always(self) -> list[int]:
        """Tasks that always pass: the harmful changes' victims, in turn."""
        return [i for i, p in enumerate(self.passes) if p == 1.0]

    @property
    def max_iterations(self) -> int:
        return len(self.failing) - ("harmful" in self.kinds)

    def task_id(self, index: int) -> str:
        return f"write-{self.words[index]}"

    def targets(self, kind: str, iteration: int) -> list[int]:
        """The tasks a change predicts it fixes."""
        if kind == "all_failing":
            return self.failing
        return [self.failing[iteration + (kind == "harmful")]]

    def session(self, run_id: str, iteration: int) -> dict:
        """Iteration `iteration`'s evolve session: one change of each kind, the order rotated
        each iteration (the first applies alone on the base; a later rule, appended after its
        siblings', is judged on its parent). A session is told apart by the scoreboard in its
        prompt: the previous iteration's changes are on it, its own are not."""
        turn = iteration % len(self.kinds)
        kinds = self.kinds[turn:] + self.kinds[:turn]
        replies = [change(rule_text(kind, iteration),
                          [self.task_id(t) for t in self.targets(kind, iteration)],
                          root_cause=f"kind {kind}") for kind in kinds]
        replies.append(done())
        if iteration == 0:
            return evolve_rule(replies, also_has=[NOTHING_JUDGED])
        return evolve_rule(replies, also_has=[f"{run_id}-it{iteration - 1:03d}-c1 "])

    def code_agent(self, iterations: int) -> list[dict]:
        """Pass probabilities per task and harness, as rules in priority order: a harmful change's
        break first, then each change's gain, then the seed's own rate (no rule: always fails). A
        rule's coin is its own, so a gain g on a task at p is a rule answering g / (1 - p)."""
        rules = []
        for i in range(iterations if "harmful" in self.kinds else 0):
            victim = self.words[self.always[i % len(self.always)]]
            rules.append({**solve_rule(has=[rule_text("harmful", i)], instruction_has=[victim]),
                          "replies": [done("gave up")], "probability": BREAK})
        for i in range(iterations):
            for kind in [k for k in ("helpful", "harmful") if k in self.kinds]:
                [target] = self.targets(kind, i)
                rules.append({**solve_rule(has=[rule_text(kind, i)],
                                           instruction_has=[self.words[target]]),
                              "probability": GAIN / (1 - self.passes[target])})
        for word, p in zip(self.words, self.passes):
            if p > 0:
                rules.append({**solve_rule(instruction_has=[word]), "probability": p})
        return rules

    def write(self, folder: Path, run_id: str, iterations: int, seed: int) -> tuple[Path, str]:
        """The suite and the agents' script of one run: (suite, model spec)."""
        if not 1 <= iterations <= self.max_iterations:
            raise SystemExit(f"iterations must lie in 1..{self.max_iterations}: each needs "
                             "two failing tasks no earlier iteration targeted")
        suite = write_suite(folder / "suite", list(self.words), [])
        sessions = [self.session(run_id, i) for i in reversed(range(iterations))]  # newest first
        return suite, write_script(folder / "agents.yaml",
                                   [*sessions, *self.code_agent(iterations)], seed=str(seed))


def rule_text(kind: str, iteration: int) -> str:
    """The rule a change appends: unique per kind and iteration, so the code agent can tell, and
    with words of its own, so the evolve agent's check for a rule that restates another (the
    harness's or an earlier change's, evolve/agent/lessons.py) does not refuse it."""
    marks = " ".join(f"{kind}{iteration}mark{j}" for j in range(5))
    return f"Rule {kind.upper()}-{iteration:02d}: {marks}."


def init_args(world: World, folder: Path, run_id: str, iterations: int, seed: int,
              workers: int) -> list[str]:
    """The arguments of `evoharness init` for one seed of `world`; `configure` finishes it."""
    suite, model = world.write(folder, run_id, iterations, seed)
    return ["init", str(folder / run_id), "--tasks", str(suite), "--model", model, "-k", "2",
            "--workers", str(workers), "--iterations", str(iterations)]


def configure(world: World, run_dir: Path) -> None:
    """run.yaml after init: room for every kind's change in a session, and no final exam (no
    held-out tasks)."""
    config_file = run_dir / "run.yaml"
    config = yaml.safe_load(config_file.read_text())
    config.update(max_changes=len(world.kinds), exam={**config.get("exam", {}), "on_stop": False})
    config_file.write_text(yaml.safe_dump(config, sort_keys=False))


class Judged(NamedTuple):
    kind: str
    verdict: str  # what the change's own trial decided: keep | revert
    decision: str  # what stayed after REVERT (a cascade reverts a kept change too)
    applied: str  # alone | on_parent
    rollouts: int  # trial rollouts recorded


def judged(run_dir: Path) -> list[Judged]:
    """Every change of a finished run, in the order the loop made them."""
    from evoharness.evolve.run import read_run

    return [Judged(r.entry.root_cause.removeprefix("kind "), r.judgement.decision, r.decision,
                   r.judgement.setup.applied, r.judgement.verdict.rollouts.recorded)
            for r in read_run(run_dir)[1].changes()]


def wilson(kept: int, n: int, z: float = 1.96) -> tuple[float, float]:
    if n == 0:
        return 0.0, 1.0
    p = kept / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return max(0.0, centre - half), min(1.0, centre + half)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seeds", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=4)
    parser.add_argument("--workers", type=int, default=2)
    args = parser.parse_args()
    evoharness = str(Path(sys.executable).parent / "evoharness")
    world = World()
    started = time.monotonic()
    rows, all_reverted = [], 0
    with tempfile.TemporaryDirectory(prefix="evo-loop-verdicts-") as scratch:
        for seed in range(args.seeds):
            folder, run_id = Path(scratch) / f"seed{seed}", f"s{seed}"
            subprocess.run([evoharness, *init_args(world, folder, run_id, args.iterations, seed,
                                                   args.workers)], check=True, capture_output=True)
            configure(world, folder / run_id)
            subprocess.run([evoharness, "evolve", str(folder / run_id)], check=True,
                           capture_output=True)
            found = judged(folder / run_id)
            all_reverted += all(j.decision == "revert" for j in found)
            rows += found
            print(f"# seed {seed}: " + ", ".join(
                f"{j.kind} {j.applied} {j.verdict}->{j.decision}" for j in found), flush=True)
    report(rows, all_reverted)
    print(f"wall_time: {time.monotonic() - started:.0f} s")


def report(rows: list[Judged], all_reverted: int) -> None:
    for kind in KINDS:
        mine = [j for j in rows if j.kind == kind]
        rate("verdict_keep_rate_" + kind, [j.verdict == "keep" for j in mine])
        for applied in ("alone", "on_parent"):
            rate(f"verdict_keep_rate_{kind}_{applied}",
                 [j.verdict == "keep" for j in mine if j.applied == applied])
        rate("keep_rate_" + kind, [j.decision == "keep" for j in mine])
    cascaded = sum(j.verdict == "keep" and j.decision == "revert" for j in rows)
    print(f"kept_then_cascaded: {cascaded} changes (their trial kept them; a rejected "
          "sibling's revert took them)")
    print(f"rollouts_per_change: {sum(j.rollouts for j in rows) / max(1, len(rows)):.1f} rollouts")
    print(f"runs_all_reverted: {all_reverted} runs")


def rate(name: str, outcomes: list[bool]) -> None:
    """`name: x` with its 95% Wilson interval and how many changes it counts."""
    lo, hi = wilson(sum(outcomes), len(outcomes))
    value = sum(outcomes) / len(outcomes) if outcomes else float("nan")
    print(f"{name}: {value:.3f} rate (95% interval {lo:.3f}-{hi:.3f}; {len(outcomes)} changes)")


if __name__ == "__main__":
    main()
