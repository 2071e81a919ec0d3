"""Transfer evaluations: any harnesses (a run's commit or tag, a harness directory) x models x
suites, k rollouts per task, in one evaluation directory (`evoharness eval`, evaluation.py's
format), and their paired comparisons with intervals (`evoharness compare`, compare.py's
statistics): harness B against A on each model and suite. This is how a harness evolved with one
model is checked on another model, or on a suite it never saw."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.manifests.history import TaskCounts
from evoharness.tasks.split import hash_split
from evoharness.tasks.task import TaskSplit, has_split_file, load_suite, task_ids_in
from evoharness.workspace.repo import HarnessRepo

from .compare import Comparison, InfraErrors, bonferroni, compare
from .evaluation import Arm, EvalDir, EvalPlan, arm_counts, arm_infra, new_plan
from ..ledger import RunPaths

SPLITS = ("all", "heldout", "train")


class Harness(BaseModel):
    """A harness commit to evaluate, and what the user called it."""

    model_config = ConfigDict(frozen=True)

    label: str
    source: str
    repo: Path
    commit: str
    tree: str


class SuiteTasks(BaseModel):
    model_config = ConfigDict(frozen=True)

    root: Path
    split: TaskSplit | None  # when the folder has no suite.toml: the hash split used
    tasks: list[str]


class TransferRow(BaseModel):
    """One comparison of an evaluation: B against A on one model and suite."""

    model_config = ConfigDict(frozen=True)

    model: str
    suite: str
    comparison: Comparison


def resolve_harness(spec: str, folder: EvalDir) -> Harness:
    """`[NAME=]SOURCE`: SOURCE is RUN (its workspace head), RUN@REV (a commit, or a tag such as
    iter-002 or seed) or a harness directory (copied into the evaluation, once, as a git
    repository, so the evaluation keeps exactly what it ran)."""
    label, sep, source = spec.partition("=")
    if not sep:
        label, source = "", spec
    run_part, at, rev = source.rpartition("@")
    if at and (Path(run_part) / "run.yaml").is_file():
        return _from_run(label or source, source, Path(run_part), rev)
    path = Path(source)
    if (path / "run.yaml").is_file():
        return _from_run(label or source, source, path, "HEAD")
    if (path / "harness.yaml").is_file():
        label = label or path.resolve().name
        copy = folder.root / "harnesses" / label
        repo = HarnessRepo(copy) if copy.exists() else HarnessRepo.create(copy, seed=path)
        sha = repo.commit_info("seed").sha
        return Harness(label=label, source=source, repo=copy, commit=sha, tree=repo.tree_id(sha))
    raise EvoError("not a harness", field="harness", value=spec,
                   hint="name a run (RUN or RUN@REV, e.g. runs/demo@iter-002) or a directory "
                        "with harness.yaml, optionally as NAME=SOURCE")


def _from_run(label: str, source: str, run_dir: Path, rev: str) -> Harness:
    repo = HarnessRepo(RunPaths(root=run_dir).workspace)
    sha = repo.commit_info(rev).sha
    return Harness(label=label, source=source, repo=repo.path, commit=sha, tree=repo.tree_id(sha))


def suite_tasks(root: Path, split: str) -> SuiteTasks:
    """The tasks of `split` (all, heldout, train) of a suite; a folder without suite.toml is split
    by hash_split, as `init` does."""
    if split not in SPLITS:
        raise EvoError("unknown split", field="split", value=split, hint=f"one of {SPLITS}")
    if (Path(root) / "task.toml").is_file():  # else a folder of no tasks: nothing would run
        raise EvoError("is one task's folder, not a folder of tasks", file=root, field="--tasks",
                       hint=f"name its parent and the task: --tasks {Path(root).parent} "
                            f"--task-ids {Path(root).name}")
    own = None if has_split_file(root) else hash_split(task_ids_in(Path(root)))
    suite = load_suite(root, own)
    return SuiteTasks(root=suite.root, split=own,
                      tasks=[t.id for t, s in suite.items() if split in ("all", s)])


def only_tasks(suites: list[SuiteTasks], task_ids: list[str]) -> list[SuiteTasks]:
    """Each suite with only the named tasks, in its own order; a suite left with none drops out.
    An id that no suite's chosen split holds is an error that names it."""
    wanted = set(task_ids)
    if not wanted:
        raise EvoError("no task ids given", field="--task-ids", value=task_ids,
                       hint="comma-separated ids, e.g. count-lines,top-ips")
    if unknown := sorted(wanted - {t for s in suites for t in s.tasks}):
        raise EvoError("tasks not in the chosen suites and split", field="--task-ids",
                       value=unknown, hint="name tasks as their folders are named")
    return [s.model_copy(update={"tasks": kept}) for s in suites
            if (kept := [t for t in s.tasks if t in wanted])]


def plan_eval(eval_id: str, harnesses: list[Harness], models: list[str],
              suites: list[SuiteTasks], k: int) -> EvalPlan:
    """Every harness on every model and suite."""
    arms = [Arm(name=f"{h.label} | {model} | {s.root.name}", label=h.label, harness=h.source,
                repo=h.repo, commit=h.commit, tree=h.tree, model=model, suite=s.root,
                split=s.split, tasks=s.tasks, k=k)
            for s in suites for model in models for h in harnesses]
    return new_plan(eval_id, arms)


class ArmTally(BaseModel):
    """One harness's stored results on one model and suite, summed over the evaluations pooled:
    per task, passes out of judged rollouts, and its infra errors."""

    model_config = ConfigDict(frozen=True)

    label: str
    model: str
    suite: str
    tasks: tuple[str, ...]
    counts: dict[str, TaskCounts]
    infra: InfraErrors

    def plus(self, other: ArmTally) -> ArmTally:
        counts = dict(self.counts)
        for task, extra in other.counts.items():
            counts[task] = counts[task].plus(extra) if task in counts else extra
        return self.model_copy(update=dict(counts=counts, infra=self.infra.plus(other.infra)))


def tallies(folders: list[EvalDir]) -> list[ArmTally]:
    """Each harness x model x suite of the evaluations, pooled across them by the harness's name.
    One name must be one harness (its git tree) in all of them: pooling two different harnesses
    under one name would credit each with the other's rollouts; and one evaluation given twice (or
    a copy of it) would count each of its rollouts twice."""
    pooled: dict[tuple, ArmTally] = {}
    trees: dict[str, tuple[str, EvalDir]] = {}
    seen: dict[tuple[str, float], EvalDir] = {}
    for folder in folders:
        plan = folder.plan()
        same = seen.setdefault((plan.eval_id, plan.created_at), folder)
        if same is not folder:
            raise EvoError(f"the same evaluation as {same.root}", file=folder.plan_file,
                           hint="give each evaluation once: its rollouts would count twice")
        counts, infra = arm_counts(folder, plan), arm_infra(folder, plan)
        for arm in plan.arms:
            tree, first = trees.setdefault(arm.label, (arm.tree, folder))
            if tree != arm.tree:
                raise EvoError(f"the harness named {arm.label!r} is another harness than in "
                               f"{first.root}", file=folder.plan_file, field="harness",
                               value=arm.label, hint="pool only evaluations of the same harness "
                               "commits, or compare them one at a time")
            tally = ArmTally(label=arm.label, model=arm.model,
                             suite=arm.suite.name, tasks=tuple(arm.tasks),
                             counts=counts[arm.name], infra=infra[arm.name])
            key = (arm.label, arm.model, arm.suite.name, tuple(arm.tasks))
            pooled[key] = pooled[key].plus(tally) if key in pooled else tally
    return list(pooled.values())


def compare_eval(folders: list[EvalDir], *, a: str | None = None, b: str | None = None,
                 confidence: float = 0.95) -> list[TransferRow]:
    """B against A (default: every other harness against the first) on each model and suite,
    all intervals holding together at `confidence` (Bonferroni over the comparisons shown); a B
    with a higher infra-error rate than A is worse (compare.py). Several evaluations of the same
    harnesses are pooled: each task's rollouts in all of them count."""
    arms = tallies(folders)
    labels = list(dict.fromkeys(arm.label for arm in arms))
    for label in (a, b):
        if label is not None and label not in labels:
            raise EvoError("no such harness in this evaluation", field="harness", value=label,
                           hint=f"its harnesses: {', '.join(labels)}")
    reference = a or labels[0]
    groups: dict[tuple, list[ArmTally]] = {}
    for arm in arms:
        groups.setdefault((arm.model, arm.suite, arm.tasks), []).append(arm)
    pairs = [(ref, arm) for group in groups.values()
             for ref in group if ref.label == reference
             for arm in group if arm.label != reference and b in (None, arm.label)]
    level = bonferroni(confidence, len(pairs))
    return [TransferRow(model=ref.model, suite=ref.suite, comparison=compare(
                ref.label, ref.counts, arm.label, arm.counts, confidence=level,
                a_infra=ref.infra, b_infra=arm.infra))
            for ref, arm in pairs]
