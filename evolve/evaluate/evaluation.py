"""An evaluation directory: a plan of arms (one harness commit x one model x one suite's tasks, k
rollouts each), its rollouts run through the executor and stored as a run stores them (one trace
file per rollout, ingested into a DuckDB trace store of the same schema), and each arm's pass
counts per task. The final exam (exam.py) and `evoharness eval` (transfer.py) are built on it;
comparing arms is compare.py's.

Layout: EVAL/plan.json, EVAL/rollouts/*.json (unserved/, quarantine/), EVAL/traces.duckdb. An
arm's rollouts are stored under the plan's id as run id and the arm's number as iteration, so a
rollout's id is unique in the store and a resumed evaluation never runs a stored rollout again."""
from __future__ import annotations

import time
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from evoharness.errors import EvoError, validation_problems
from evoharness.files import write_model
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.executor import Executor, HarnessTree, RolloutSpec, rollout_specs
from evoharness.tasks.runner import plan_rollouts
from evoharness.tasks.task import TaskSplit, load_suite
from evoharness.traces.queries import infra_errors, pass_counts
from evoharness.traces.store import TraceStore

from .compare import InfraErrors
from ..ledger.lock import RunBusy, RunLock
from ..rollouts import ModelServerDown, Progress, execute_served


class Arm(BaseModel):
    """One harness commit, on one model, on some tasks of one suite, k rollouts per task."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str = Field(min_length=1)  # unique in the plan
    label: str = Field(min_length=1)  # the harness's name: arms of one harness share it
    harness: str  # where it came from, as the user named it (RUN@REV, a directory)
    repo: Path  # the git repository that holds the commit
    commit: str
    tree: str  # git's id of the content: two arms with one tree run the same harness
    model: str
    suite: Path
    split: TaskSplit | None = None  # the suite's split when it is not suite.toml's
    tasks: list[str]
    k: int = Field(ge=1)
    keep_left: bool = False  # its rollouts carry what each agent left (the best-of-N picker's)
    # Attempt a samples at temperatures[a % len] (best-of-N's); empty: the harness's own.
    temperatures: list[float] = Field(default_factory=list)


class EvalPlan(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    eval_id: str
    created_at: float
    arms: list[Arm] = Field(min_length=1)

    def arm(self, name: str) -> Arm:
        found = next((a for a in self.arms if a.name == name), None)
        if found is None:
            raise EvoError("no such harness in this evaluation", field="arm", value=name,
                           hint=f"its arms: {', '.join(a.name for a in self.arms)}")
        return found

    def same_work(self, other: EvalPlan) -> bool:
        """Whether `other` asks for exactly the rollouts this plan asks for."""
        return [a.model_dump(exclude={"harness"}) for a in self.arms] == \
            [a.model_dump(exclude={"harness"}) for a in other.arms]


class EvalDir:
    """The files of one evaluation directory."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self.plan_file = self.root / "plan.json"
        self.rollouts = self.root / "rollouts"
        self.unserved = self.rollouts / "unserved"
        self.db = self.root / "traces.duckdb"
        self.lock = self.root / "lock"

    def exists(self) -> bool:
        return self.plan_file.is_file()

    def plan(self) -> EvalPlan:
        if not self.exists():
            raise EvoError("not an evaluation directory (no plan.json)", file=self.plan_file,
                           hint="create one with `evoharness eval DIR --harness ...`")
        try:
            return EvalPlan.model_validate_json(self.plan_file.read_bytes())
        except ValidationError as error:  # its JSON too: pydantic parses it
            first = validation_problems(error)[0]
            raise EvoError(f"invalid evaluation plan: {first.message}", file=self.plan_file,
                           field=first.field, hint="delete the evaluation directory and run "
                           "`evoharness eval` again") from None

    def start(self, plan: EvalPlan) -> EvalPlan:
        """Write `plan`, or keep the stored one when it asks for the same rollouts (a resume)."""
        if self.exists():
            stored = self.plan()
            if not stored.same_work(plan):
                raise EvoError("this evaluation directory holds another plan", file=self.plan_file,
                               hint="choose a new directory, or repeat the options it was made "
                                    "with to resume it")
            return stored
        write_model(self.plan_file, plan)
        return plan


def run_plan(folder: EvalDir, plan: EvalPlan, executor: Executor,
             progress: Progress | None = None) -> int:
    """Run every rollout of `plan` not stored yet and ingest them; returns how many ran. Rollouts
    the model server did not answer are kept aside (not stored) and raise ModelServerDown, so the
    next call runs exactly those again."""
    done = _stored_ids(folder, plan) | {p.stem for p in folder.rollouts.glob("*.json")}
    # The arms interleaved (by attempt, task, then arm) rather than run one after another: drift
    # in the machine's load falls on every arm alike, and an evaluation stopped early leaves each
    # task's rollouts paired across the arms.
    specs = sorted((s for number, arm in enumerate(plan.arms)
                    for s in _arm_specs(plan, number, arm, done)),
                   key=lambda s: (s.attempt, s.task.id, s.iteration))
    written, aside = execute_served(executor, specs, folder.rollouts, folder.unserved, progress)
    with TraceStore(folder.db) as store:
        store.ingest_dir(folder.rollouts)
    if aside:
        raise ModelServerDown(
            f"the model server did not answer in {len(aside)} of {len(written)} rollouts "
            f"(kept in {folder.unserved})", field="model",
            hint="start the server and run the same command again; stored rollouts are not "
                 "run again")
    return len(written)


def store_finished(folder: EvalDir, plan: EvalPlan) -> int | None:
    """Store the rollout files an evaluation stopped before storing (`eval` stores them at its
    end), so that a comparison counts every finished rollout; returns how many. None when an
    evaluation is running in the folder: those files are its own to store."""
    stored = _stored_ids(folder, plan)
    pending = [p for p in folder.rollouts.glob("*.json") if p.stem not in stored]
    if not pending:
        return 0
    lock = RunLock(folder.lock)
    try:
        lock.acquire("compare")
    except RunBusy:
        return None
    try:
        with TraceStore(folder.db) as store:
            return store.ingest_files(pending).ingested  # a damaged file is quarantined
    finally:
        lock.release()


def arm_counts(folder: EvalDir, plan: EvalPlan) -> dict[str, dict[str, TaskCounts]]:
    """Per arm, per task: passes out of scored rollouts (infra errors never count)."""
    with TraceStore(folder.db, read_only=True) as store:
        return {arm.name: {task: TaskCounts(passes=c.passes, total=c.n)
                           for task, c in pass_counts(store.con, plan.eval_id, number).items()}
                for number, arm in enumerate(plan.arms)}


def arm_infra(folder: EvalDir, plan: EvalPlan) -> dict[str, InfraErrors]:
    """Per arm: its rollouts that stayed infra errors through their reruns, out of all."""
    found = {}
    with TraceStore(folder.db, read_only=True) as store:
        for number, arm in enumerate(plan.arms):
            errors, total = infra_errors(store.con, plan.eval_id, number)
            found[arm.name] = InfraErrors(errors=errors, rollouts=total)
    return found


def _arm_specs(plan: EvalPlan, number: int, arm: Arm, skip: set[str]) -> list[RolloutSpec]:
    suite = load_suite(arm.suite, arm.split)
    missing = sorted(set(arm.tasks) - set(suite.tasks))
    if missing:
        raise EvoError("tasks not in the suite", file=arm.suite, field="tasks", value=missing)
    items = [(t, s) for t, s in suite.items() if t.id in arm.tasks]
    harness = HarnessTree(repo=arm.repo, commit=arm.commit, tree=arm.tree)
    return rollout_specs(plan_rollouts(items, arm.k), run_id=plan.eval_id, iteration=number,
                         harness=harness, model=arm.model, skip=skip, keep_left=arm.keep_left,
                         temperatures=arm.temperatures)


def _stored_ids(folder: EvalDir, plan: EvalPlan) -> set[str]:
    if not folder.db.exists():
        return set()
    with TraceStore(folder.db, read_only=True) as store:
        return store.stored_rollout_ids(plan.eval_id)


def new_plan(eval_id: str, arms: list[Arm]) -> EvalPlan:
    names = [a.name for a in arms]
    twice = sorted({n for n in names if names.count(n) > 1})
    if twice:
        raise EvoError("two harnesses share a name", field="arm", value=twice,
                       hint="give each --harness a distinct NAME=SOURCE")
    return EvalPlan(eval_id=eval_id, created_at=time.time(), arms=arms)
