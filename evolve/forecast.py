"""What a run's stop rules will cost on this machine, said before the night (init) and during it
(status): rollouts per iteration (evaluation, the trials at their caps, the exam), hours and
tokens, from the seconds a rollout takes here. The pace comes from the run's own history once it
has one, else from this machine's last measurement with the model (agent/clients/speed.py, which
every run's evaluations update), and the forecast says which."""
from __future__ import annotations

import socket
import time

from pydantic import BaseModel

from evoharness.agent.clients import make_model
from evoharness.agent.clients.speed import MachineSpeed, load_speed, save_speed
from evoharness.tasks.task import load_suite
from evoharness.traces.queries import EVALUATION

from .config import RunConfig
from .ledger import RunLedger
from .ledger.records import EvalResult, EvolveResult

EXAM_RUNS = 4  # seed, seed again (the noise floor), final, best
SEED_RUNS = 2  # an exam whose final harness is the seed runs it twice only


class Plan(BaseModel):
    """The rollouts the configured stop rules allow."""

    evaluations: int  # evaluated iterations: the baseline, then one per evolution iteration
    evaluation: int  # rollouts of one evaluation (train and held-out tasks, k each)
    baseline_extra: int  # the calibrated baseline's second pass
    changes: int  # per iteration, at most
    probe_cap: int  # one change's paired probe, at most
    screen_cap: int  # one change's regression screen, at most (every train task at its cap)
    exam: int  # its seed (twice), final and best harness; with a best-of-N baseline of known N,
    # its attempts too; less the seed's rollouts it takes from the baseline
    exam_of_seed: int  # the exam when no change is kept: the seed twice (and the baseline)
    baseline_unsized: bool = False  # a best-of baseline whose N is the evolution's own spend

    @property
    def least_evaluations(self) -> int:
        """With no change kept the limit does not evaluate the seed again (evolve/loop.py)."""
        return max(1, self.evaluations - 1)

    @property
    def least(self) -> int:
        """Rollouts when every trial ends at once (no change made)."""
        return self.least_evaluations * self.evaluation + self.baseline_extra + self.exam_of_seed

    @property
    def most(self) -> int:
        """Rollouts when every iteration makes every change and every trial runs to its caps."""
        trials = (self.evaluations - 1) * self.changes * (self.probe_cap + self.screen_cap)
        return self.evaluations * self.evaluation + self.baseline_extra + self.exam + trials


class Pace(BaseModel):
    seconds_per_rollout: float  # wall time of an evaluation over its rollouts
    tokens_per_rollout: float
    evolve_seconds: float | None  # one evolve agent session
    evolve_tokens: float | None
    source: str  # where the figures come from, in words


def plan(config: RunConfig, train: int, heldout: int, validation: int = 0) -> Plan:
    """`validation`: validation tasks are evaluated with the rest, and a change's trial then runs
    two paired tests (its predicted tasks, then the validation tasks), each to the longer cap."""
    evaluation = (train + validation + heldout) * config.k
    probe_cap = (2 * config.verdicts.validation_max_rollouts if validation
                 else config.verdicts.max_rollouts)
    exam = config.exam
    best_of = heldout * (exam.picks or exam.k) * (exam.best_of_n or 0)
    # the exam's seed arms take the baseline's held-out rollouts of the seed (evolve/evaluate/exam.py)
    reused = heldout * min(exam.k * SEED_RUNS, config.k * (2 if config.calibration else 1))
    return Plan(evaluations=config.stop.iterations + 1, evaluation=evaluation,
                baseline_extra=evaluation if config.calibration else 0,
                changes=config.max_changes, probe_cap=probe_cap,
                screen_cap=config.verdicts.screen_max_rollouts * train,
                exam=heldout * exam.k * EXAM_RUNS + best_of - reused,
                exam_of_seed=heldout * exam.k * SEED_RUNS + best_of - reused,
                baseline_unsized=exam.baseline is not None and exam.best_of_n is None)


def run_pace(ledger: RunLedger, config: RunConfig) -> Pace | None:
    """The run's own pace: its evaluations' wall time over their rollouts, its rollouts' tokens and
    its evolve sessions; None before its first evaluation."""
    records = ledger.phase_records()
    evals = [r for r in records if isinstance(r.result, EvalResult) and r.result.rollouts_run]
    if not evals:
        return None
    sessions = [r for r in records if isinstance(r.result, EvolveResult)
                and not r.result.resumed]
    with ledger.reading() as store:
        tokens = store.con.execute(
            f"SELECT avg(tokens_in + tokens_out) FROM rollouts WHERE run_id = ? AND {EVALUATION}",
            [ledger.run_id]).fetchall()[0][0]
    first, last = evals[0].iteration, evals[-1].iteration
    span = f"iteration {first}" if first == last else f"iterations {first}-{last}"
    return Pace(
        seconds_per_rollout=sum(r.seconds for r in evals) / sum(r.result.rollouts_run
                                                                for r in evals),
        tokens_per_rollout=tokens or 0.0,
        evolve_seconds=_mean([r.seconds for r in sessions]),
        evolve_tokens=_mean([r.result.tokens for r in sessions]),
        source=f"this run's evaluations ({span}, {config.workers} workers)")


def pace(ledger: RunLedger | None, config: RunConfig) -> Pace | None:
    """The run's own pace, else this machine's last measurement with the model, else None."""
    own = run_pace(ledger, config) if ledger is not None else None
    if own is not None:
        return own
    measured = load_speed(make_model(config.model).name)
    if measured is None:
        return None
    return Pace(seconds_per_rollout=measured.seconds_per_rollout,
                tokens_per_rollout=measured.tokens_per_rollout,
                evolve_seconds=measured.evolve_seconds, evolve_tokens=measured.evolve_tokens,
                source=f"this machine's last measurement with {measured.model}: "
                       f"{measured.source}")


def describe(config: RunConfig, ledger: RunLedger | None = None) -> list[str]:
    """The run's forecast as `init` and `status` print it."""
    suite = load_suite(config.tasks, config.split)
    splits = [split for task, split in suite.items()
              if config.task_ids is None or task.id in config.task_ids]
    return forecast_lines(config, splits.count("train"), splits.count("heldout"),
                          pace(ledger, config), splits.count("validation"))


def forecast_lines(config: RunConfig, train: int, heldout: int, known: Pace | None,
                   validation: int = 0) -> list[str]:
    """The forecast in a few lines of text."""
    p = plan(config, train, heldout, validation)
    twice = " (the baseline twice)" if p.baseline_extra else ""
    evaluations = (f"{p.evaluations}" if p.least_evaluations == p.evaluations
                   else f"{p.least_evaluations}-{p.evaluations}")
    changes = f"{p.changes} change" + ("" if p.changes == 1 else "s")
    lines = [f"forecast: {p.least}-{p.most} rollouts: {evaluations} evaluations x "
             f"{p.evaluation}{twice}, trials of up to {changes} x ({p.probe_cap} probe "
             f"+ {p.screen_cap} screen) in {p.evaluations - 1} iterations, an exam of "
             f"{p.exam_of_seed}-{p.exam}"
             + (" and its best-of baseline (N: the evolution's rollouts per train task)"
                if p.baseline_unsized else "")]
    if known is None:
        lines.append("  no pace measured yet for this model on this machine: hours follow the "
                     "first evaluation (evoharness status)")
        return lines
    sessions = p.evaluations - 1
    evolve_s = (known.evolve_seconds or 0.0) * sessions
    evolve_tokens = (known.evolve_tokens or 0.0) * sessions
    hours = [(n * known.seconds_per_rollout + evolve_s) / 3600 for n in (p.least, p.most)]
    tokens = [n * known.tokens_per_rollout + evolve_tokens for n in (p.least, p.most)]
    evolve = ("" if known.evolve_seconds is None else
              f" and {sessions} evolve sessions of {known.evolve_seconds / 60:.0f} min")
    lines.append(f"  {hours[0]:.1f}-{hours[1]:.1f} h, {tokens[0] / 1e6:.2f}-{tokens[1] / 1e6:.2f}"
                 f" M tokens at {known.seconds_per_rollout:.0f} s and "
                 f"{known.tokens_per_rollout:,.0f} tokens a rollout{evolve}; from "
                 f"{known.source}")
    return lines


def remember(ledger: RunLedger, config: RunConfig) -> None:
    """Keep the run's pace as this machine's measurement with the model, for the next forecast
    and the stall watch. A scripted test double has no pace worth keeping."""
    if config.model.startswith("scripted:"):
        return
    own = run_pace(ledger, config)
    if own is None:
        return
    with ledger.reading() as store:
        decode, prefill = store.con.execute(
            "SELECT sum(tokens_out) FILTER (WHERE decode_s > 0) / nullif(sum(decode_s), 0), "
            "sum(tokens_read) FILTER (WHERE prefill_s > 0) / nullif(sum(prefill_s), 0) "
            f"FROM rollouts WHERE run_id = ? AND {EVALUATION}", [ledger.run_id]).fetchall()[0]
    try:
        save_speed(MachineSpeed(
            host=socket.gethostname(), model=make_model(config.model).name,
            workers=config.workers,
            seconds_per_rollout=own.seconds_per_rollout, tokens_per_rollout=own.tokens_per_rollout,
            evolve_seconds=own.evolve_seconds, evolve_tokens=own.evolve_tokens,
            decode_tokens_per_s=decode or None, prefill_tokens_per_s=prefill or None,
            source=f"run {config.run_id}{own.source.removeprefix('this run')}",
            measured_at=time.time()))
    except OSError:  # a cache: a read-only home must not end the run
        pass


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None
