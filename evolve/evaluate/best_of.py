"""The exam's matched-budget baseline: the seed harness with the evolution's budget spent at test
time. Per held-out task it makes `picks` picks (the exam's k unless run.yaml says), each from N
fresh attempts of the seed: the model chooses one from what they left (picker.py) and the chosen
attempt's outcome is what is scored. So each pick is one independent best-of-N sample, paired by
task with the exam's other arms like one of their rollouts, at N rollouts (and the picker's
calls) each. N is set (`best-of:N`) or the evolution's rollouts per train task (cost.py).

The attempts are one arm of the exam's evaluation plan (capturing what each agent left before
its verifier ran); each pick is stored as one file, EXAM/picks/TASK-pNN.json, with every prompt
the picker read, so a resumed exam runs no stored rollout and asks no stored pick again."""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evoharness.agent.clients import make_model
from evoharness.agent.model import Model, ModelError
from evoharness.errors import EvoError, validation_problems
from evoharness.files import write_model
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.left_behind import LeftBehind
from evoharness.tasks.results import RolloutResult, rollout_id
from evoharness.tasks.runner import bound_to_rollout
from evoharness.traces.queries import iteration_totals, rollout_counts
from evoharness.traces.store import TraceStore

from .evaluation import Arm, EvalDir, EvalPlan
from ..ledger.records import BestOfRecord, EvolutionCost, slashed
from .picker import PickCall, pick
from ..rollouts import ModelServerDown
from ..run import Run

Say = Callable[[str], None]


class BestOf(BaseModel):
    """The baseline an exam runs, fixed before the exam is named."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    n: int
    n_from: Literal["evolution", "given"]
    picks: int
    temperatures: list[float] = []  # its attempts sample at these in turn; [] the seed's

    @property
    def name(self) -> str:
        return f"best-of-{self.n}"

    @property
    def label(self) -> str:
        at = f" at temperatures {slashed(self.temperatures)}" if self.temperatures else ""
        return f"seed best-of-{self.n}{at}"

    def attempts(self, number: int, task_id: str, pick_number: int) -> list[str]:
        """The rollout ids a pick chooses among: its own N attempts of arm `number`."""
        first = pick_number * self.n
        return [rollout_id(number, task_id, a) for a in range(first, first + self.n)]


class Pick(BaseModel):
    """One stored pick: the attempts it chose among, the one chosen, and the picker's calls."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    task_id: str
    number: int
    attempts: list[str]
    chosen: str
    calls: list[PickCall]


def best_of(run: Run, cost: EvolutionCost) -> BestOf | None:
    """The baseline run.yaml's exam asks for, N resolved; None when it asks for none."""
    exam = run.config.exam
    if exam.baseline is None:
        return None
    given = exam.best_of_n
    return BestOf(n=given or cost.rollouts_per_train_task,
                  n_from="given" if given else "evolution", picks=exam.picks or exam.k,
                  temperatures=exam.temperatures)


def baseline_arm(baseline: BestOf, seed: Arm) -> Arm:
    """The attempts' arm: the seed's, picks x N rollouts per task, each keeping what it left."""
    return seed.model_copy(update={"name": baseline.name, "label": baseline.label,
                                   "k": baseline.picks * baseline.n, "keep_left": True,
                                   "temperatures": baseline.temperatures})


def run_picks(run: Run, folder: EvalDir, plan: EvalPlan, baseline: BestOf,
              say: Say = lambda _: None) -> list[Pick]:
    """Every pick of the baseline, the stored ones read back; the model is made only when one
    is missing. Raises ModelServerDown (picks made so far are kept) when it cannot be reached."""
    number = next(i for i, arm in enumerate(plan.arms) if arm.name == baseline.name)
    arm, model = plan.arms[number], None
    picks = []
    for task in arm.tasks:
        for pick_number in range(baseline.picks):
            path = folder.root / "picks" / f"{task}-p{pick_number:02d}.json"
            attempts = baseline.attempts(number, task, pick_number)
            made = _stored(path, attempts)
            if made is None:
                model = model or make_model(arm.model)
                made = _pick(model, run.suite.tasks[task].instruction, folder, plan, task,
                             pick_number, attempts)
                write_model(path, made)
                say(f"  pick {pick_number + 1} of {task}: {made.chosen} of {len(attempts)} "
                    f"attempts ({len(made.calls)} picker calls)")
            picks.append(made)
    return picks


def pick_counts(folder: EvalDir, plan: EvalPlan, picks: list[Pick]) -> dict[str, TaskCounts]:
    """Per task: the chosen attempts that passed, out of those scored (as a rollout is)."""
    with TraceStore(folder.db, read_only=True) as store:
        counts = rollout_counts(store.con, plan.eval_id, [p.chosen for p in picks])
    return {task: TaskCounts(passes=c.passes, total=c.n) for task, c in counts.items()}


def baseline_record(baseline: BestOf, folder: EvalDir, plan: EvalPlan,
                    picks: list[Pick]) -> BestOfRecord:
    """What the baseline cost: its attempts (rollouts, tokens) and the picker's calls."""
    number = next(i for i, arm in enumerate(plan.arms) if arm.name == baseline.name)
    with TraceStore(folder.db, read_only=True) as store:
        totals = next((t for t in iteration_totals(store.con, plan.eval_id)
                       if t.iteration == number), None)
    calls = [c for p in picks for c in p.calls]
    return BestOfRecord(
        name=baseline.name, label=baseline.label, n=baseline.n, n_from=baseline.n_from,
        picks=baseline.picks, temperatures=baseline.temperatures,
        rollouts=totals.rollouts if totals else 0,
        tokens=(totals.tokens_in + totals.tokens_out if totals else 0) + sum(c.tokens for c in calls),
        picker_calls=len(calls), fallbacks=sum(bool(c.fallback) for c in calls))


def _pick(model: Model, instruction: str, folder: EvalDir, plan: EvalPlan, task: str,
          pick_number: int, attempts: list[str]) -> Pick:
    """Ask the picker; it reads what each attempt left and nothing else of its result."""
    left = [(rollout, _left(folder, rollout)) for rollout in attempts]
    name = f"pick-{task}-p{pick_number:02d}"
    client = bound_to_rollout(model, {"run_id": plan.eval_id, "rollout_id": name})
    try:
        chosen, calls = pick(client, instruction, left, key=f"{plan.eval_id}/{name}")
    except ModelError as error:
        raise ModelServerDown(f"the model server did not answer the picker: {error.message}",
                              field="model", value=getattr(model, "name", None),
                              hint="start the server and run the same command again; stored "
                                   "rollouts and picks are not run again") from None
    return Pick(task_id=task, number=pick_number, attempts=attempts, chosen=chosen, calls=calls)


def _left(folder: EvalDir, rollout: str) -> LeftBehind | None:
    path = folder.rollouts / f"{rollout}.json"
    if not path.is_file():  # quarantined as unreadable: shown as an attempt that left nothing
        return None
    return RolloutResult.model_validate_json(path.read_bytes()).left


def _stored(path: Path, attempts: list[str]) -> Pick | None:
    if not path.is_file():
        return None
    try:
        made = Pick.model_validate_json(path.read_bytes())
    except ValidationError as error:
        first = validation_problems(error)[0]
        raise EvoError(f"invalid stored pick: {first.message}", file=path, field=first.field,
                       hint="delete the file: the exam asks the picker again") from None
    if made.attempts != attempts:
        raise EvoError("a stored pick chose among other attempts than this exam's", file=path,
                       field="attempts", hint="delete the file: the exam asks the picker again")
    return made
