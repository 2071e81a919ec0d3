"""Which library entries answer a run's failures: a failure signature (the outcome / exit-reason
classes of the train rollouts that did not pass, the names of their error events, and the failure
patterns debugger/patterns.py finds in them) is recorded with each entry when it is filed (a
starter entry's names its patterns), and an entry matches a later iteration whose failing
rollouts share a class with it. Train rollouts only for the offers: validation and held-out
results never reach the evolve agent (a change's trial reads the validation rollouts the same way,
to pick the validation tasks that show the failure it targets: evolve/trials.py)."""
from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from pathlib import Path

import duckdb

from evoharness.debugger.patterns import patterns_by_rollout
from evoharness.debugger.queries import Scope
from evoharness.evolve.agent.tools import LibraryOffer
from evoharness.tasks.results import Split

from .entry import LibraryEntry
from .record import carry_over, rank_key
from .starter import PATTERN_CLASS, starter_diff, starter_entries
from .store import Library

OFFERED = 5  # entries one evolve session is shown at most
SHOWN_TASKS = 6  # tasks an offer names where its patterns showed

_FAILED = ("FROM rollouts WHERE run_id = ? AND iteration = ? AND split = ? "
           "AND trial_change = '' AND outcome NOT IN ('pass', 'infra_error')")


def rollout_signatures(con: duckdb.DuckDBPyConnection, run_id: str, iteration: int,
                       split: Split = "train") -> dict[str, dict[str, set[str]]]:
    """Per task of `split` with a failed rollout in this evaluation, the classes of each such
    rollout: 'fail/done', 'timeout/rollout_timeout', 'error:ParseError',
    'pattern:repeated_command', ..."""
    params = [run_id, iteration, split]
    classes = con.execute(f"SELECT task_id, rollout_id, outcome || '/' || "
                          f"split_part(exit_reason, ':', 1) {_FAILED}", params).fetchall()
    errors = con.execute(f"SELECT DISTINCT r.task_id, r.rollout_id, 'error:' || e.name FROM "
                         f"events e JOIN (SELECT rollout_id, task_id {_FAILED}) r "
                         f"USING (rollout_id) WHERE e.kind = 'error'", params).fetchall()
    signatures: dict[str, dict[str, set[str]]] = {}
    for task, rollout, found in [*classes, *errors]:
        signatures.setdefault(task, {}).setdefault(rollout, set()).add(found)
    task_of = {rollout: task for task, rollout, _ in classes}
    scope = Scope(run_id=run_id, iteration=iteration, previous=None, split=split)
    for rollout, names in patterns_by_rollout(con, scope).items():
        if rollout in task_of:  # a failed rollout of the split (patterns_by_rollout reads no other)
            signatures[task_of[rollout]][rollout] |= {PATTERN_CLASS + name for name in names}
    return signatures


def task_signatures(con: duckdb.DuckDBPyConnection, run_id: str,
                    iteration: int) -> dict[str, set[str]]:
    """Per train task with a failed rollout in this evaluation, the classes its failures show."""
    return {task: set().union(*rollouts.values())
            for task, rollouts in rollout_signatures(con, run_id, iteration).items()}


def failure_signature(con: duckdb.DuckDBPyConnection, run_id: str, iteration: int,
                      task_ids: Iterable[str] | None = None) -> list[str]:
    """The classes of one evaluation's failed train rollouts (of `task_ids` only, when given)."""
    signatures = task_signatures(con, run_id, iteration)
    wanted = signatures if task_ids is None else set(task_ids)
    return sorted({c for task, found in signatures.items() if task in wanted for c in found})


def reached_tasks(con: duckdb.DuckDBPyConnection, run_id: str,
                  split: Split = "train") -> set[str]:
    """The tasks of `split` some evaluation of this run passed at least once."""
    return {task for (task,) in con.execute(
        "SELECT DISTINCT task_id FROM rollouts WHERE run_id = ? AND split = ? "
        "AND trial_change = '' AND outcome = 'pass'", [run_id, split]).fetchall()}


def cued_tasks(entry: LibraryEntry, signatures: dict[str, dict[str, set[str]]],
               reached: Collection[str] = ()) -> list[str]:
    """The tasks with a failed rollout that shares a class with the entry's cue (`signatures`:
    rollout_signatures), in tasks_showing's order."""
    return tasks_showing(entry.cue.signature, signatures, reached)


def tasks_showing(cue: Iterable[str] | None, signatures: dict[str, dict[str, set[str]]],
                  reached: Collection[str] = ()) -> list[str]:
    """The tasks with a failed rollout that shares a class with `cue` (None: any failed rollout),
    those where the most rollouts did first: each rollout counts once, so patterns that come
    together (a loop repeats its command and its error) count a failure once, and a task whose
    every rollout failed the way the cue says leads. Among equals, those in `reached` first: a
    task the agent passes sometimes is where a trial's few pairs can show a fix (on the night's
    1.5B, offers led with hard tasks no rollout ever passed)."""
    wanted = None if cue is None else set(cue)
    shown = {task: sum(1 for classes in rollouts.values() if wanted is None or wanted & classes)
             for task, rollouts in signatures.items()}
    return sorted((task for task, count in shown.items() if count),
                  key=lambda task: (-shown[task], task not in reached, task))


def matching(entries: Sequence[LibraryEntry], signature: Iterable[str],
             limit: int = OFFERED) -> list[LibraryEntry]:
    """Entries sharing a failure class with `signature`, ranked by what is known to carry over
    (record.py: those whose validation or held-out record shows a gain first, then those with no
    such record, then those whose record shows none), then by the cue: the most shared classes
    first, then the better record of decisions (kept more often than reverted). The order is the
    policy: a small evolve model applies the first offer."""
    seen = set(signature)
    ranked = sorted(((rank_key(e), len(seen & set(e.cue.signature)), len(e.held) - len(e.failed),
                      e.id, e) for e in entries), key=lambda r: (r[0], -r[1], -r[2], r[3]))
    return [entry for _, overlap, _, _, entry in ranked if overlap][:limit]


def shelf(library: Path | None, starter: bool = True) -> list[tuple[LibraryEntry, str]]:
    """Every entry a run may be offered, with its diff: the library's, and the starter entries
    it has no record of (once filed there, its copy, with its trials, stands for the starter)."""
    mine = Library(library) if library is not None else None
    entries = [(e, mine.diff(e.id)) for e in mine.entries()] if mine else []
    filed = {entry.id for entry, _ in entries}
    if starter:
        entries += [(e, starter_diff(e.id)) for e in starter_entries() if e.id not in filed]
    return entries


def offers(library: Path | None, con: duckdb.DuckDBPyConnection, run_id: str, iteration: int,
           *, starter: bool = True, exclude: Collection[str] = ()) -> list[LibraryOffer]:
    """The entries that match this evaluation's failures, as the evolve agent is shown them, each
    with the tasks where its patterns showed, in cued_tasks' order (`exclude`: entries the run
    applied already)."""
    signatures = rollout_signatures(con, run_id, iteration)
    available = {e.id: (e, diff) for e, diff in shelf(library, starter) if e.id not in exclude}
    found = {c for rollouts in signatures.values() for classes in rollouts.values()
             for c in classes}
    chosen = matching([entry for entry, _ in available.values()], found)
    reached = reached_tasks(con, run_id)
    return [_offer(entry, available[entry.id][1], cued_tasks(entry, signatures, reached))
            for entry in chosen]


def _offer(entry: LibraryEntry, diff: str, tasks: list[str]) -> LibraryOffer:
    seen = ", ".join(tasks[:SHOWN_TASKS]) + (" ..." if len(tasks) > SHOWN_TASKS else "")
    summary = (f"{entry.summary()} Off the tasks it was shaped on: "
               f"{carry_over(entry).reason()}. Seen here in: {seen}.")
    return LibraryOffer(entry.id, summary, entry.text(diff),
                        edits=tuple(entry.edits), component=entry.component,
                        root_cause=entry.cue.root_cause,
                        targeted_fix=entry.targeted_fix, tasks=tuple(tasks))
