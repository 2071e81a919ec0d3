"""Putting the workspace right before a phase is run (again) after a crash: stray edits are kept
on a recovery branch, never thrown away, and EVOLVE starts from the harness its iteration's
evaluation left (or the registered manifest's last commit). What the phases do is phases.py's."""
from __future__ import annotations

import time
from collections.abc import Callable

from evoharness.manifests.schema import IterationManifest

from .ledger import Phase
from .run import Run

Say = Callable[[str], None]


def prepare_workspace(run: Run, iteration: int, phase: Phase, say: Say) -> None:
    """Before EVAL, TRIAL and REVERT (a revert killed before its commit leaves a dirty tree)
    keep any stray edits aside; before EVOLVE also drop the commits of an evolve agent that was
    killed before it registered its manifest, going back to the harness the iteration evaluated
    (or forward to the registered manifest's last commit). TRIAL never touches the working tree
    (its trees are commits of their own), so the workspace is the evolved head throughout."""
    if phase in (Phase.EVAL, Phase.TRIAL, Phase.REVERT):
        target = run.repo.head()
    elif phase == Phase.EVOLVE:
        registered = run.ledger.manifest(iteration, run.train_ids)
        target = (evolved_head(registered) if registered
                  else run.ledger.phase(iteration, Phase.DISTILL).harness_commit)
    else:
        return
    kept = recover_workspace(run, target)
    if kept:
        say(f"uncommitted workspace edits kept on branch {kept}")


def evolved_head(manifest: IterationManifest) -> str:
    """The harness an EVOLVE session left: its last change's commit (each builds on the last)."""
    return manifest.changes[-1].commit if manifest.changes else manifest.harness_commit_before


def recover_workspace(run: Run, commit: str) -> str | None:
    """Put the workspace back at `commit` before a phase is redone. Uncommitted edits (a killed
    evolve agent, a hand edit) are committed to a recovery branch first, never thrown away."""
    branch = f"recovered/{time.strftime('%Y%m%d-%H%M%S')}"
    kept = run.repo.save_uncommitted(branch)
    if kept or run.repo.head() != commit:
        run.repo.reset_hard(commit)
    return branch if kept else None
