"""Where a run keeps everything: the one object that spells out the run directory's layout, derived
from the run directory alone (no global state). Every command and stage asks it for a path."""
from __future__ import annotations

from pathlib import Path

from pydantic import BaseModel, ConfigDict

CONFIG_FILE = "run.yaml"


class RunPaths(BaseModel):
    model_config = ConfigDict(frozen=True)

    root: Path

    @property
    def config(self) -> Path:
        return self.root / CONFIG_FILE

    @property
    def workspace(self) -> Path:
        """The harness, a git repository."""
        return self.root / "workspace"

    @property
    def db(self) -> Path:
        """The DuckDB trace store: rollouts and events, and the index of the ledger's records."""
        return self.root / "traces.duckdb"

    @property
    def manifests(self) -> Path:
        return self.root / "manifests"

    def manifest(self, iteration: int) -> Path:
        """The pre-registered manifest of one iteration's changes."""
        return self.manifests / f"iter-{iteration:03d}.json"

    @property
    def ledger(self) -> Path:
        """The run's own records as files: the truth the store's run tables index."""
        return self.root / "ledger"

    @property
    def run_record(self) -> Path:
        return self.ledger / "run.json"

    @property
    def stop(self) -> Path:
        """Why the loop last stopped (`status` says it while the run is still there)."""
        return self.ledger / "stop.json"

    @property
    def lock(self) -> Path:
        """Held (flock) by the one process that may change the run."""
        return self.ledger / "lock"

    @property
    def phases(self) -> Path:
        return self.ledger / "phases"

    def phase(self, iteration: int, phase: str) -> Path:
        return self.phases / f"it{iteration:03d}-{phase}.json"

    @property
    def judgements(self) -> Path:
        return self.ledger / "judgements"

    def judgement(self, change_id: str) -> Path:
        return self.judgements / f"{change_id}.json"

    @property
    def trials(self) -> Path:
        return self.ledger / "trials"

    def trial(self, change_id: str) -> Path:
        """A change's trial as set up before its first rollout: its trees, history and design."""
        return self.trials / f"{change_id}.json"

    @property
    def reverts(self) -> Path:
        return self.ledger / "reverts"

    def revert(self, change_id: str) -> Path:
        return self.reverts / f"{change_id}.json"

    @property
    def exam_records(self) -> Path:
        return self.ledger / "exams"

    def exam_record(self, exam_id: str) -> Path:
        return self.exam_records / f"{exam_id}.json"

    def exam_dir(self, exam_id: str) -> Path:
        """One exam's evaluation directory (evolve/evaluate/evaluation.py): its plan, rollouts and own
        trace store, apart from the run's so that no held-out result reaches the loop."""
        return self.root / "exams" / exam_id

    @property
    def builds(self) -> Path:
        """Each container task's image build log, copied from the image cache."""
        return self.root / "builds"

    @property
    def evals(self) -> Path:
        """Transfer evaluations (`evoharness eval`) kept with the run, which the report shows."""
        return self.root / "evals"

    def iteration_dir(self, iteration: int) -> Path:
        return self.root / "iterations" / f"it{iteration:03d}"

    def rollouts(self, iteration: int) -> Path:
        """Rollout trace files, written by the runner and ingested into the store (bad files are
        moved to quarantine/, rollouts the model server missed to unserved/)."""
        return self.iteration_dir(iteration) / "rollouts"

    def trial_rollouts(self, iteration: int) -> Path:
        """The rollout files of the iteration's trials (both arms of every change), ingested like
        an evaluation's."""
        return self.iteration_dir(iteration) / "trials"

    def unserved(self, folder: Path) -> Path:
        """Rollouts of `folder` the model server did not answer, moved out of the ingest folder
        (kept, never deleted) so that a resume runs them again."""
        return folder / "unserved"

    def all_rollout_dirs(self) -> list[Path]:
        return sorted([*(self.root / "iterations").glob("it*/rollouts"),
                       *(self.root / "iterations").glob("it*/trials")])

    def evidence(self, iteration: int) -> Path:
        """The layered evidence the evolve agent reads (overview.md at the top)."""
        return self.iteration_dir(iteration) / "evidence"

    def evolve_trace(self, iteration: int) -> Path:
        """The evolve agent's events of one session."""
        return self.iteration_dir(iteration) / "evolve_trace.json"

    @property
    def report(self) -> Path:
        return self.root / "report.html"
