"""An open run: its config, paths, ledger (records and trace store), harness repository and task
suite in one object that every phase receives (no global state). Opening a run to change it takes
the run lock; creating a run (`init`) lives here too."""
from __future__ import annotations

import time
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path

from evoharness.errors import EvoError, ValidationFailed
from evoharness.tasks.sandbox.environments import EnvironmentSettings, Environments
from evoharness.tasks.sandbox.images import Skipped, write_skips
from evoharness.tasks.results import Split
from evoharness.tasks.split import (DEFAULT_HELDOUT, HASH, describe, hash_split, parse_heldout,
                                    require_train, with_validation)
from evoharness.tasks.task import Suite, Task, TaskSplit, has_split_file, load_suite, task_ids_in
from evoharness.workspace.repo import HarnessRepo

from .config import RunConfig, load_config, save_config
from .ledger import RunLedger, RunPaths, RunRecord
from .ledger.ledger import Say

SKIPPED_FILE = "skipped.txt"  # in RUN/builds: the tasks init left out, each with its reason


@dataclass
class Run:
    paths: RunPaths
    config: RunConfig
    ledger: RunLedger
    repo: HarnessRepo
    suite: Suite

    @property
    def run_id(self) -> str:
        return self.config.run_id

    @cached_property
    def items(self) -> list[tuple[Task, Split]]:
        """The (task, split) pairs this run evaluates: the configured subset of the suite."""
        wanted = self.config.task_ids
        return [(t, s) for t, s in self.suite.items() if wanted is None or t.id in wanted]

    @property
    def train_ids(self) -> list[str]:
        return [t.id for t, split in self.items if split == "train"]

    @property
    def validation_ids(self) -> list[str]:
        """Tasks that judge whether a change carries over (its trial runs them); the evolve
        agent never sees them."""
        return [t.id for t, split in self.items if split == "validation"]

    @property
    def heldout_ids(self) -> list[str]:
        return [t.id for t, split in self.items if split == "heldout"]

    @property
    def unseen_ids(self) -> list[str]:
        """Every task the evolve agent must not see: validation and held-out."""
        return [t.id for t, split in self.items if split != "train"]

    def close(self) -> None:
        self.ledger.close()

    def __enter__(self) -> Run:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_run(run_dir: str | Path, *, command: str = "evolve", say: Say = lambda _: None) -> Run:
    """The run, to change it as `command`: holds the run lock until closed, and has checked (and
    if need be rebuilt) the trace store."""
    paths, config = load_config(run_dir)
    suite = load_suite(config.tasks, config.split)
    _check_task_ids(paths, config, suite)
    if not (paths.workspace / ".git").is_dir():
        raise EvoError("the run has no harness workspace", file=paths.workspace,
                       hint="the run directory is damaged; create a new one with `evoharness init`")
    ledger = RunLedger.open(paths, command=command, say=say)
    _remove_stale_git_locks(paths.workspace / ".git")
    return Run(paths, config, ledger, HarnessRepo(paths.workspace), suite)


def read_run(run_dir: str | Path) -> tuple[RunConfig, RunLedger]:
    """A run's config and ledger, to read (while another process may be changing the run)."""
    paths, config = load_config(run_dir)
    return config, RunLedger.open(paths)


def _remove_stale_git_locks(git_dir: Path) -> None:
    """A process killed inside a git command leaves its lock files (index.lock, HEAD.lock, a ref's
    .lock) and every later git write fails. Holding the run lock proves no other evoharness
    process works on this run, so any lock left is stale."""
    for lock in [*git_dir.glob("*.lock"), *git_dir.glob("refs/**/*.lock")]:
        lock.unlink(missing_ok=True)


def init_run(run_dir: str | Path, config: RunConfig, say: Say = lambda _: None) -> RunPaths:
    """Create RUN/: run.yaml, the workspace from the seed harness (a git repo) and the store.
    Tasks that run in their image have it built first; those whose base cannot be had here are
    left out of the run (task_ids), each said with its reason."""
    paths = RunPaths(root=Path(run_dir))
    if paths.config.exists():
        raise EvoError("a run already exists here", file=paths.config,
                       hint="choose another directory, or continue it with `evoharness evolve`")
    suite = load_suite(config.tasks, config.split)
    config = config.model_copy(update={"tasks": Path(config.tasks).resolve()})
    _check_task_ids(paths, config, suite)
    _check_train_tasks(config, suite)
    config, skipped = _buildable(config, suite, say)
    paths.root.mkdir(parents=True, exist_ok=True)
    if skipped:
        write_skips(paths.builds / SKIPPED_FILE, skipped)
    HarnessRepo.create(paths.workspace)
    created = time.time()
    RunLedger.create(paths, RunRecord(run_id=config.run_id, created_at=created,
                                      config=config.model_dump(mode="json") | {"created": created}))
    save_config(paths, config)  # last: a directory with run.yaml is a complete run
    return paths


def _buildable(config: RunConfig, suite: Suite, say: Say) -> tuple[RunConfig, list[Skipped]]:
    """The config without the tasks that cannot run in their image here; a failed build is an
    error naming the Dockerfile and step, before the run exists."""
    tasks = [t for t, _ in suite.items() if config.task_ids is None or t.id in config.task_ids]
    settings = EnvironmentSettings(kind=config.environment, engine=config.engine)
    prepared = Environments(settings, None, say=say).prepare(tasks)
    if prepared.failed:
        raise ValidationFailed("task images", list(prepared.failed))
    if not prepared.skipped:
        return config, []
    left_out = {s.task_id for s in prepared.skipped}
    for skip in prepared.skipped:
        say(f"skipped {skip.task_id}: {skip.reason}")
    kept = [t.id for t in tasks if t.id not in left_out]
    if not kept:
        raise EvoError("no task of the suite can run here", field="tasks", value=str(config.tasks),
                       hint="see the reasons above; `evoharness env setup` makes local bases")
    return config.model_copy(update={"task_ids": kept}), prepared.skipped


def choose_split(tasks: Path, task_ids: list[str] | None, heldout: str | None,
                 validation: float | None = None) -> tuple[TaskSplit | None, str]:
    """The split a new run keeps in run.yaml, with a line that says how it was chosen: `heldout`
    (a share or a list of ids) when given, else a hash split when the folder has no suite.toml;
    (None, "") when suite.toml's split applies. `validation`: a share of the tasks drawn from
    the train side as validation tasks (for a split the run draws itself)."""
    if heldout is None and has_split_file(tasks):
        if validation is not None:
            raise EvoError("suite.toml's split applies; it lists its own validation tasks",
                           file=Path(tasks) / "suite.toml", field="--validation",
                           value=validation, hint="list them in [split] validation = [...]")
        return None, ""
    root = Path(tasks)
    if not root.is_dir():
        raise EvoError("task folder does not exist", file=root, field="tasks")
    ids = task_ids or task_ids_in(root)
    if heldout is not None:
        split, how = parse_heldout(heldout, ids), "--heldout"
    else:
        split = hash_split(ids)
        how = (f"no suite.toml: the {round(DEFAULT_HELDOUT * 100)}% of ids with the lowest {HASH} "
               "hash; change it with --heldout SHARE or --heldout ID,ID")
    if validation is not None:
        split = with_validation(split, validation)
        how += f"; --validation {validation:g}: the next train ids by hash"
    return split, describe(split, how)


def _check_train_tasks(config: RunConfig, suite: Suite) -> None:
    """A run evolves on its train tasks: with none (suite.toml holds every task out, as
    validation or held-out, or the subset picks no train task) it is refused as `--heldout`
    naming every task is."""
    wanted = config.task_ids
    train = [t for t in suite.train if wanted is None or t in wanted]
    held = [t for t in [*suite.validation, *suite.heldout] if wanted is None or t in wanted]
    if train or not held:
        return
    if wanted is not None and suite.train:
        require_train(train, held, field="task_ids (--subset)")
    elif config.split is None:
        require_train(train, held, file=suite.root / "suite.toml", field="split")
    require_train(train, held, field="heldout")


def _check_task_ids(paths: RunPaths, config: RunConfig, suite: Suite) -> None:
    unknown = sorted(set(config.task_ids or ()) - set(suite.tasks))
    if unknown:
        raise EvoError("unknown task ids", file=paths.config, field="task_ids", value=unknown,
                       hint=f"tasks in {config.tasks}: {', '.join(sorted(suite.tasks))}")
