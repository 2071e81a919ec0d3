"""Which library entries answer a run's failures: a failure signature (the outcome / exit-reason
classes of the train rollouts that did not pass, and the names of their error events) is recorded
with each entry when it is filed, and an entry matches a later iteration whose failing rollouts
share a class with it. Train rollouts only: held-out results never reach the evolve agent."""
from __future__ import annotations

from collections.abc import Iterable, Sequence
from pathlib import Path

import duckdb

from evolve.agent.tools import LibraryOffer

from .entry import LibraryEntry
from .store import Library

OFFERED = 5  # entries one evolve session is shown at most

_FAILED = ("FROM rollouts WHERE run_id = ? AND iteration = ? AND split = 'train' "
           "AND outcome NOT IN ('pass', 'infra_error')")


def failure_signature(con: duckdb.DuckDBPyConnection, run_id: str, iteration: int,
                      task_ids: Iterable[str] | None = None) -> list[str]:
    """'fail/done', 'timeout/rollout_timeout', 'error:ParseError', ... of one evaluation's failed
    train rollouts (of `task_ids` only, when given)."""
    where, params = _FAILED, [run_id, iteration]
    if task_ids is not None:
        where += " AND list_contains(?, task_id)"
        params.append(sorted(task_ids))
    classes = con.execute(f"SELECT DISTINCT outcome || '/' || split_part(exit_reason, ':', 1) "
                          f"{where}", params).fetchall()
    errors = con.execute(f"SELECT DISTINCT 'error:' || name FROM events WHERE kind = 'error' AND "
                         f"rollout_id IN (SELECT rollout_id {where})", params).fetchall()
    return sorted({row[0] for row in [*classes, *errors]})


def matching(entries: Sequence[LibraryEntry], signature: Iterable[str],
             limit: int = OFFERED) -> list[LibraryEntry]:
    """Entries sharing a failure class with `signature`: the most shared first, then those with
    the better record (kept more often than reverted)."""
    seen = set(signature)
    ranked = sorted(((len(seen & set(e.cue.signature)), len(e.held) - len(e.failed), e.id, e)
                     for e in entries), key=lambda r: (-r[0], -r[1], r[2]))
    return [entry for overlap, _, _, entry in ranked if overlap][:limit]


def offers(library: Path, con: duckdb.DuckDBPyConnection, run_id: str,
           iteration: int) -> list[LibraryOffer]:
    """The entries of `library` that match this evaluation's failures, as the evolve agent is
    shown them (none when the library does not exist yet)."""
    shelf = Library(library)
    signature = failure_signature(con, run_id, iteration)
    return [LibraryOffer(e.id, e.summary(), e.text(shelf.diff(e.id)))
            for e in matching(shelf.entries(), signature)]
