"""A default train / held-out split for a folder of tasks that has no suite.toml: a stable hash of
each task id ranks the tasks, and the lowest-ranked share is held out (and, when asked, the next
share of the train side becomes validation tasks). Loading a suite with a split
is task.py's; keeping the split a run chose (run.yaml) is evolve/'s."""
from __future__ import annotations

import hashlib
from collections.abc import Sequence
from pathlib import Path

from evoharness.errors import EvoError
from evoharness.text import comma_list

from .task import TaskSplit

DEFAULT_HELDOUT = 0.25
HASH = "sha256"  # of the task id's UTF-8 bytes: the same ids give the same split on any machine


def rank(task_id: str) -> str:
    return hashlib.new(HASH, task_id.encode()).hexdigest()


def hash_split(task_ids: Sequence[str], heldout: float = DEFAULT_HELDOUT) -> TaskSplit:
    """round(heldout x n) tasks held out (at least one, and one left to train on, given two
    tasks), those whose id hashes lowest; both lists keep the order of `task_ids`."""
    if not 0 < heldout < 1:
        raise EvoError("the held-out share must be between 0 and 1", field="heldout",
                       value=heldout, hint="e.g. --heldout 0.25, or a list of task ids")
    n = len(task_ids)
    count = min(max(round(heldout * n), 1), n - 1) if n >= 2 else 0
    chosen = set(sorted(task_ids, key=rank)[:count])
    return TaskSplit(train=[t for t in task_ids if t not in chosen],
                     heldout=[t for t in task_ids if t in chosen])


def with_validation(split: TaskSplit, share: float) -> TaskSplit:
    """`split` with round(share x all its tasks) train tasks moved to validation (at least one,
    and one left to train on), those whose id hashes lowest among the train tasks."""
    if not 0 < share < 1:
        raise EvoError("the validation share must be between 0 and 1", field="validation",
                       value=share, hint="e.g. --validation 0.25")
    total = len(split.train) + len(split.validation) + len(split.heldout)
    count = min(max(round(share * total), 1), len(split.train) - 1)
    chosen = set(sorted(split.train, key=rank)[:max(count, 0)])
    return TaskSplit(train=[t for t in split.train if t not in chosen],
                     validation=[*split.validation, *(t for t in split.train if t in chosen)],
                     heldout=split.heldout)


def listed_split(task_ids: Sequence[str], heldout: Sequence[str]) -> TaskSplit:
    """The split that holds out exactly `heldout` (ids of `task_ids`)."""
    unknown = sorted(set(heldout) - set(task_ids))
    if unknown:
        raise EvoError("held-out task ids not in the task folder", field="heldout", value=unknown,
                       hint=f"tasks: {', '.join(task_ids)}")
    train = [t for t in task_ids if t not in heldout]
    require_train(train, list(heldout), field="heldout")
    return TaskSplit(train=[t for t in task_ids if t not in heldout],
                     heldout=[t for t in task_ids if t in heldout])


def require_train(train: Sequence[str], heldout: Sequence[str], *, file: str | Path | None = None,
                  field: str = "heldout") -> None:
    """Refuse a split with nothing to train on, the same words whether it comes from `--heldout`
    or from suite.toml: evolving needs train tasks (an exam-only suite is for `evoharness eval`)."""
    if heldout and not train:
        raise EvoError("every task would be held out: nothing to train on", file=file,
                       field=field, value=list(heldout),
                       hint="leave at least one task to train on (`evoharness eval` runs a "
                            "suite that is all held out)")


def parse_heldout(text: str, task_ids: Sequence[str]) -> TaskSplit:
    """`--heldout`: a share (0.25) or comma-separated task ids."""
    try:
        share = float(text)
    except ValueError:
        return listed_split(task_ids, comma_list(text))
    return hash_split(task_ids, share)


def describe(split: TaskSplit, how: str) -> str:
    """One line for the user: what is held out (and what validates) and how it was chosen."""
    total = len(split.train) + len(split.validation) + len(split.heldout)
    validation = (f"; validation {len(split.validation)}: {', '.join(split.validation)}"
                  if split.validation else "")
    return (f"held out {len(split.heldout)} of {total} tasks ({how}): "
            f"{', '.join(split.heldout) or 'none'}{validation}")
