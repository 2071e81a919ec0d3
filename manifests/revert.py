"""Applying revert decisions to the harness repo: one `git revert` per rejected change, newest
first; a change that cannot be undone on its own (a later change rewrote its lines: see
HarnessRepo.revert) cascades deterministically through later changes that touched the same files;
all or nothing. Which changes to revert is each change's trial's call (judgement.py); git mechanics are
workspace/repo.py's; storing the records is the run ledger's."""
from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

from pydantic import BaseModel, ConfigDict

from evoharness.errors import EvoError
from evoharness.workspace.repo import HarnessRepo, RevertConflict

from .schema import ChangeManifestEntry


class Decided(Protocol):
    """A change's decision with its reason (a stored Judgement)."""

    change_id: str
    decision: str
    reason: str


class RevertRecord(BaseModel):
    """One `git revert` of a change (or of a commit without a manifest, by hand)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    change_id: str
    commit: str
    revert_commit: str
    reason: str
    cascaded_from: str | None = None
    manual: bool = False  # a rollback by hand (the target itself, not what cascaded with it)
    iteration: int | None = None  # set when stored: the iteration whose REVERT (or rollback) made it


class _Target(BaseModel):
    """A commit to undo, with the change id it carries (its sha when it is not a registered change)."""

    model_config = ConfigDict(frozen=True)

    change_id: str
    commit: str  # full sha


class _Reverter:
    """One batch of reverts against a repo; remembers what is already reverted (resume)."""

    def __init__(self, repo: HarnessRepo, targets: Sequence[_Target]) -> None:
        self.repo = repo
        history = repo.log()
        self.position = {info.sha: i for i, info in enumerate(history)}  # 0 = newest
        self.targets = sorted(targets, key=lambda t: self.position[t.commit])
        self.done = {
            info.trailers["Reverts-Commit"]: info.sha
            for info in history if "Reverts-Commit" in info.trailers
        }
        self.records: list[RevertRecord] = []

    def revert(self, target: _Target, reason: str, cascaded_from: str | None = None) -> None:
        if target.commit in self.done:
            self._record(target, self.done[target.commit], reason, cascaded_from)
            return
        try:
            sha = self.repo.revert(target.commit, reason=reason)
        except RevertConflict:
            self._cascade(target)
            sha = self.repo.revert(target.commit, reason=reason)
        self.done[target.commit] = sha
        self._record(target, sha, reason, cascaded_from)

    def _cascade(self, target: _Target) -> None:
        """Revert, newest first, every later unreverted change touching the target's files."""
        files = set(self.repo.changed_files(target.commit))
        dependents = [
            t for t in self.targets
            if self.position[t.commit] < self.position[target.commit] and t.commit not in self.done
            and files & set(self.repo.changed_files(t.commit))
        ]
        if not dependents:
            raise EvoError(
                "revert conflicts, and no later registered change touches the same files",
                field="commit", value=target.commit, hint="revert the conflicting commit by hand",
            )
        for dependent in dependents:
            if dependent.commit in self.done:  # a nested cascade already took it
                continue
            why = f"reverted with {target.change_id} because it depends on it"
            self.revert(dependent, why, cascaded_from=target.change_id)

    def _record(self, target: _Target, sha: str, reason: str, cascaded_from: str | None) -> None:
        self.records.append(RevertRecord(change_id=target.change_id, commit=target.commit,
                                         revert_commit=sha, reason=reason,
                                         cascaded_from=cascaded_from))


def _targets(repo: HarnessRepo, changes: Sequence[ChangeManifestEntry]) -> dict[str, _Target]:
    return {c.id: _Target(change_id=c.id, commit=repo.commit_info(c.commit).sha) for c in changes}


def _all_or_nothing(repo: HarnessRepo, work) -> list[RevertRecord]:
    start = repo.head()
    try:
        return work()
    except BaseException:
        # A half-applied cascade would leave a harness nobody evaluated: go back to the start.
        repo.reset_hard(start)
        raise


def apply_decisions(
    repo: HarnessRepo, verdicts: Sequence[Decided], changes: Sequence[ChangeManifestEntry]
) -> list[RevertRecord]:
    """Revert every change whose verdict says so, newest first.

    `changes` should be every registered change of the run, so a conflict can cascade through
    later kept changes (each recorded with `cascaded_from`). A change already reverted (a commit
    with its Reverts-Commit trailer exists) is reported, not reverted again; changes cascaded by
    an earlier call are not reported again, so store the records right away.
    """
    targets = _targets(repo, changes)
    reasons = {v.change_id: v.reason for v in verdicts if v.decision == "revert"}
    unknown = sorted(set(reasons) - set(targets))
    if unknown:
        raise EvoError("verdicts name changes without a manifest entry", value=unknown)
    reverter = _Reverter(repo, list(targets.values()))

    def work() -> list[RevertRecord]:
        for target in [t for t in reverter.targets if t.change_id in reasons]:
            reverter.revert(target, f"{target.change_id}: {reasons[target.change_id]}")
        return reverter.records

    return _all_or_nothing(repo, work)


def rollback(
    repo: HarnessRepo, commit: str, reason: str, changes: Sequence[ChangeManifestEntry]
) -> list[RevertRecord]:
    """Revert one harness commit by hand (cascading like `apply_decisions`); the target's record
    is marked manual."""
    sha = repo.commit_info(commit).sha
    targets = _targets(repo, changes)
    target = next((t for t in targets.values() if t.commit == sha), None)
    target = target or _Target(change_id=sha[:12], commit=sha)
    reverter = _Reverter(repo, [*targets.values(), target])

    def work() -> list[RevertRecord]:
        reverter.revert(target, f"manual rollback: {reason}")
        return [r.model_copy(update={"manual": r.cascaded_from is None}) for r in reverter.records]

    return _all_or_nothing(repo, work)

