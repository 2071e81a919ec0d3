"""The run ledger: a run's own records (phase records, manifests, trial setups, judgements,
reverts) as files written atomically, which are the truth, and the trace store that indexes them
next to the rollouts. The loop writes through it; status, manifest show, log, diff, the report,
the evidence overview and the evolve prompt read through it. What the records mean is
manifests/' and loop.py's.

One process changes a run (it holds the run lock); it opens the DuckDB file only for the moment it
writes, so readers in other processes get in between."""
from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

from pydantic import BaseModel, ValidationError

from evoharness.errors import EvoError, validation_problems
from evoharness.files import write_model
from evoharness.manifests.judgement import Judgement, TrialSetup
from evoharness.manifests.record import ChangeRecord
from evoharness.manifests.revert import RevertRecord
from evoharness.manifests.schema import IterationManifest
from evoharness.manifests.scores import Scoreboard
from evoharness.manifests.store import load_manifest, load_manifests, save_manifest
from evoharness.traces.ingest import IngestReport, trace_files
from evoharness.traces.store import StoreDamaged, TraceStore

from . import index
from .lock import RunLock
from .paths import RunPaths
from .records import (
    PHASE_ORDER, ExamRecord, Phase, PhaseRecord, PhaseResult, RunRecord, StopRecord,
)

Say = Callable[[str], None]
M = TypeVar("M", bound=BaseModel)


class RunLedger:
    """Open with `RunLedger.open` (a reader) or `RunLedger.open(..., command=...)` (the writer,
    which takes the run lock, checks the store and rebuilds it if it is damaged)."""

    def __init__(self, paths: RunPaths, lock: RunLock | None = None) -> None:
        self.paths = paths
        self._lock = lock
        self.run = _load(paths.run_record, RunRecord)
        self.run_id = self.run.run_id

    # -- opening ----------------------------------------------------------------------------------
    @classmethod
    def create(cls, paths: RunPaths, run: RunRecord) -> None:
        """A new run's record and its empty store (`init`)."""
        write_model(paths.run_record, run)
        with TraceStore(paths.db) as store:
            index.index_all(store.con, run, [], [], [], [])

    @classmethod
    def open(cls, paths: RunPaths, *, command: str | None = None,
             say: Say = lambda _: None) -> RunLedger:
        """A reader's ledger, or with `command` the writer's (run lock held until close)."""
        if command is None:
            return cls(paths)
        lock = RunLock(paths.lock)
        lock.acquire(command)
        try:
            ledger = cls(paths, lock)
            ledger._check_store(say)
        except BaseException:
            lock.release()
            raise
        return ledger

    @property
    def writer(self) -> bool:
        return self._lock is not None

    def close(self) -> None:
        if self._lock is not None:
            self._lock.release()
            self._lock = None

    # -- the store --------------------------------------------------------------------------------
    @contextmanager
    def reading(self) -> Iterator[TraceStore]:
        """The store read-only, for a moment (it waits while a writer's transaction runs)."""
        with TraceStore(self.paths.db, read_only=True) as store:
            yield store

    @contextmanager
    def _writing(self) -> Iterator[TraceStore]:
        self._require_writer()
        with TraceStore(self.paths.db) as store:
            yield store

    def ingest(self, folder: Path) -> IngestReport:
        """Rollout trace files into the store (idempotent; bad files quarantined)."""
        with self._writing() as store:
            return store.ingest_dir(folder)

    def stored_rollout_ids(self) -> set[str]:
        with self.reading() as store:
            return store.stored_rollout_ids(self.run_id)

    # -- phases -----------------------------------------------------------------------------------
    def phase_records(self) -> list[PhaseRecord]:
        """Every finished phase, in run order."""
        records = [_load(p, PhaseRecord) for p in sorted(self.paths.phases.glob("it*.json"))]
        return sorted(records, key=lambda r: (r.iteration, PHASE_ORDER.index(r.phase)))

    def phase(self, iteration: int, phase: Phase) -> PhaseRecord | None:
        path = self.paths.phase(iteration, phase)
        return _load(path, PhaseRecord) if path.exists() else None

    def phases_done(self, iteration: int) -> set[Phase]:
        return {Phase(p.stem.split("-", 1)[1])
                for p in self.paths.phases.glob(f"it{iteration:03d}-*.json")}

    def position(self) -> tuple[int, set[Phase]]:
        """The iteration to work on and the phases it has finished."""
        records = self.phase_records()
        if not records:
            return 0, set()
        last = records[-1]
        if last.phase == PHASE_ORDER[-1]:
            return last.iteration + 1, set()
        return last.iteration, self.phases_done(last.iteration)

    def record_phase(self, iteration: int, phase: Phase, result: PhaseResult, *,
                     harness_commit: str, seconds: float) -> PhaseRecord:
        """Mark `phase` of `iteration` finished: its record file, then its index row."""
        record = PhaseRecord(run_id=self.run_id, iteration=iteration, phase=phase,
                             harness_commit=harness_commit, finished_at=time.time(),
                             seconds=round(seconds, 2), result=result)
        self._save(self.paths.phase(iteration, phase), record)
        with self._writing() as store:
            index.index_phase(store.con, record)
        return record

    def record_stop(self, iteration: int, reason: str) -> StopRecord:
        record = StopRecord(iteration=iteration, phase_records=len(self.phase_records()),
                            reason=reason, stopped_at=time.time())
        self._save(self.paths.stop, record)
        return record

    def stop(self) -> StopRecord | None:
        """The loop's last stop while the run is still where it stopped (else None)."""
        if not self.paths.stop.exists():
            return None
        record = _load(self.paths.stop, StopRecord)
        return record if record.phase_records == len(self.phase_records()) else None

    # -- changes ----------------------------------------------------------------------------------
    def manifests(self) -> list[IterationManifest]:
        """Every pre-registered manifest, oldest iteration first."""
        return load_manifests(self.paths.manifests)

    def manifest(self, iteration: int, known_tasks: Iterable[str] | None = None
                 ) -> IterationManifest | None:
        """The iteration's pre-registered manifest, if EVOLVE has written it."""
        path = self.paths.manifest(iteration)
        return load_manifest(path, known_tasks) if path.exists() else None

    def preregister(self, manifest: IterationManifest) -> None:
        """EVOLVE: the manifest's file, before any evaluation can see the changes' effect."""
        self._require_writer()
        save_manifest(self.paths.manifest(manifest.iteration), manifest)

    def register(self, iteration: int, known_tasks: Iterable[str]) -> IterationManifest:
        """COMMIT: the pre-registered manifest, checked again, into the store's changes."""
        manifest = load_manifest(self.paths.manifest(iteration), known_tasks)
        _refuse_reused_ids(manifest, self.manifests(), self.paths.manifest(iteration))
        with self._writing() as store:
            index.index_changes(store.con, manifest)
        return manifest

    def record_trial_setup(self, setup: TrialSetup) -> None:
        """TRIAL: a change's trees, history and design, before its first rollout."""
        self._save(self.paths.trial(setup.change_id), setup)

    def trial_setup(self, change_id: str) -> TrialSetup | None:
        path = self.paths.trial(change_id)
        return _load(path, TrialSetup) if path.exists() else None

    def record_judgements(self, judgements: Iterable[Judgement]) -> None:
        """One judgement per change (a resumed trial decides the same and replaces it)."""
        judgements = list(judgements)
        for judgement in judgements:
            self._save(self.paths.judgement(judgement.change_id), judgement)
        with self._writing() as store:
            for judgement in judgements:
                index.index_judgement(store.con, judgement)

    def record_reverts(self, iteration: int, records: Iterable[RevertRecord]) -> list[RevertRecord]:
        stored = [r.model_copy(update={"iteration": iteration}) for r in records]
        for revert in stored:
            self._save(self.paths.revert(revert.change_id), revert)
        with self._writing() as store:
            for revert in stored:
                index.index_revert(store.con, self.run_id, revert)
        return stored

    def judgement(self, change_id: str) -> Judgement | None:
        path = self.paths.judgement(change_id)
        return _load(path, Judgement) if path.exists() else None

    def judgements(self) -> dict[str, Judgement]:
        return {p.stem: _load(p, Judgement) for p in sorted(self.paths.judgements.glob("*.json"))}

    def reverts(self) -> dict[str, RevertRecord]:
        return {p.stem: _load(p, RevertRecord) for p in sorted(self.paths.reverts.glob("*.json"))}

    def changes(self) -> list[ChangeRecord]:
        """Every pre-registered change with its judgement and revert, oldest first."""
        judged, reverted = self.judgements(), self.reverts()
        return [ChangeRecord(iteration=m.iteration, entry=c, judgement=judged.get(c.id),
                             revert=reverted.get(c.id))
                for m in self.manifests() for c in m.changes]

    def scoreboard(self) -> Scoreboard:
        return Scoreboard.of(self.changes())

    # -- exams ------------------------------------------------------------------------------------
    def record_exam(self, exam: ExamRecord) -> None:
        """A finished exam: its record file, then its index row."""
        self._save(self.paths.exam_record(exam.exam_id), exam)
        with self._writing() as store:
            index.index_exam(store.con, exam)

    def exam(self, exam_id: str) -> ExamRecord | None:
        path = self.paths.exam_record(exam_id)
        return _load(path, ExamRecord) if path.exists() else None

    def exams(self) -> list[ExamRecord]:
        """Every finished exam, oldest first."""
        found = [_load(p, ExamRecord) for p in self.paths.exam_records.glob("*.json")]
        return sorted(found, key=lambda e: e.finished_at)

    # -- integrity --------------------------------------------------------------------------------
    def rebuild(self, reason: str = "replaced") -> Path | None:
        """A new store from the run's files (rollout files, then every record), put in place of
        the old one, which is kept aside (returned; None when there was none)."""
        self._require_writer()
        aside = _set_aside(self.paths.db, reason)
        building = self.paths.db.with_name(f".{self.paths.db.name}.rebuilding")
        for leftover in (building, Path(f"{building}.wal")):
            leftover.unlink(missing_ok=True)
        with TraceStore(building) as store:
            store.ingest_files([f for d in self.paths.all_rollout_dirs() for f in trace_files(d)])
            self._index_all(store)
        os.replace(building, self.paths.db)
        return aside

    def _check_store(self, say: Say) -> None:
        """Before a writer changes anything: the store must read back whole and index every
        record (a crash can fall between a record's file and its row); else it is rebuilt."""
        if not self.paths.db.exists():
            say("the trace store is missing: rebuilding it from the run's files")
            self.rebuild()
            return
        try:
            with TraceStore(self.paths.db) as store:
                store.verify()
                self._index_all(store)
        except StoreDamaged as damage:
            aside = self.rebuild("damaged")
            say(f"{damage}: rebuilt it from the run's files (the damaged file is kept as {aside})")

    def _index_all(self, store: TraceStore) -> None:
        committed = {r.iteration for r in self.phase_records() if r.phase == Phase.COMMIT}
        index.index_all(store.con, self.run, self.phase_records(),
                        [m for m in self.manifests() if m.iteration in committed],
                        self.judgements().values(), self.reverts().values(), self.exams())

    def _require_writer(self) -> None:
        if not self.writer:
            raise EvoError("this run was opened to read", file=self.paths.root,
                           hint="only the process holding the run lock may change it")

    def _save(self, path: Path, record: BaseModel) -> None:
        self._require_writer()
        write_model(path, record)


def _load(path: Path, model: type[M]) -> M:
    """A record file; a damaged or hand-edited one is an error naming it."""
    try:
        return model.model_validate_json(path.read_bytes())
    except FileNotFoundError:
        raise EvoError("a run record is missing", file=path,
                       hint="the run directory is damaged, or not an evoharness run") from None
    except ValidationError as error:
        first = validation_problems(error)[0]
        raise EvoError(f"invalid run record: {first.message}", file=path,
                       field=first.field) from None


def _refuse_reused_ids(manifest: IterationManifest, every: list[IterationManifest],
                       path: Path) -> None:
    for other in every:
        if other.iteration == manifest.iteration:
            continue
        reused = {c.id for c in manifest.changes} & {c.id for c in other.changes}
        if reused:
            raise EvoError(f"change id already used by iteration {other.iteration}", file=path,
                           field="id", value=sorted(reused), hint="give every change a new id")


def _set_aside(db: Path, reason: str) -> Path | None:
    """Move the store (and its write-ahead log) aside, never deleting it."""
    if not db.exists():
        Path(f"{db}.wal").unlink(missing_ok=True)  # a log without its database is useless
        return None
    stamp = time.strftime('%Y%m%d-%H%M%S')
    aside = db.with_name(f"{db.name}.{reason}-{stamp}")
    n = 0
    while aside.exists():
        n += 1
        aside = db.with_name(f"{db.name}.{reason}-{stamp}.{n}")
    os.replace(db, aside)
    wal = Path(f"{db}.wal")
    if wal.exists():
        os.replace(wal, Path(f"{aside}.wal"))
    return aside
