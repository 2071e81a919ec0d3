"""Process faults: `evoharness evolve` over several iterations, SIGKILLed at seeded points (and,
forced, during INGEST, inside a change's TRIAL and during a revert), resumed after each kill until
it completes; nothing is duplicated, torn or lost: the run's files, the store, manifests, trial
verdicts, revert commits and git agree, and the verdicts replay from the rebuilt store.

Every kill point is a state of the run's files (its progress), never a time, so the test does the
same on a fast or a loaded machine. The store is opened (and read whole) after every kill; a store
a kill damaged must be rebuilt by the next start."""
from __future__ import annotations

import os
import random
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path

import git
import pytest

from evoharness.evolve.cli import main
from evoharness.evolve.config import RunConfig, StopRules
from evoharness.evolve.ledger import EVALUATE, PHASE_ORDER, Phase, RunPaths
from evoharness.evolve.run import init_run, open_run, read_run
from evoharness.evolve.trials import outcomes, stored_rollouts, trial_of
from tests.fixtures.e2e_agents import (
    HARMFUL_RULE, HELPFUL_RULE, NOTHING_JUDGED, OTHER_HARMFUL_RULE, change, done, evolve_rule,
    harmful_rules, solve_rule, write_script,
)
from tests.traces.helpers import tables
from evoharness.traces.store import StoreDamaged, TraceStore

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]
EVOHARNESS = Path(sys.executable).parent / "evoharness"
SEED = 20240917
ITERATIONS = 3
K = 2
KILLS = 24  # kill points before the final, unkilled resume
REVERT_FROM = 12  # after this many kills, one runs on to the next revert if none was hit yet
WAIT_SECONDS = 120.0  # a safety net only: no kill point depends on time
MODEL_LATENCY = 0.02  # seconds per reply, so a kill after a progress step lands close to it


def agents_script(path: Path) -> str:
    """The first evolve session (nothing judged yet) adds the helpful rule, which is kept; every
    later session adds a harmful rule (by iteration: a reverted one may not come back), which the
    next iteration reverts. The choice depends only on the conversation, so a killed session
    replays the same script when resumed."""
    return write_script(path, [
        evolve_rule([change(HELPFUL_RULE, TRAIN), done()], also_has=[NOTHING_JUDGED]),
        *harmful_rules(["write-alpha"]),
        solve_rule(has=[HELPFUL_RULE], lacks=[HARMFUL_RULE, OTHER_HARMFUL_RULE]),
    ], latency_s=MODEL_LATENCY)


def progress(run_dir: Path) -> int:
    """Steps the run has made and kept: rollout files (evaluations' and trials'), phase records,
    manifests, trial setups, judgements and reverts only ever appear (a resume never removes one)."""
    patterns = ("iterations/*/rollouts/*.json", "iterations/*/trials/*.json",
                "ledger/phases/*.json", "manifests/*.json", "ledger/trials/*.json",
                "ledger/judgements/*.json", "ledger/reverts/*.json")
    return sum(len(list(run_dir.glob(p))) for p in patterns)


def trial_files(run_dir: Path) -> int:
    return len(list(run_dir.glob("iterations/*/trials/*.json")))


def position(run_dir: Path) -> tuple[int, str]:
    """(iteration, first unfinished phase) as the run's records say, read after the process died."""
    iteration, done_phases = read_run(run_dir)[1].position()
    return iteration, next(p for p in PHASE_ORDER if p not in done_phases).value


def stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def changed(path: Path) -> Callable[[], bool]:
    before = stat(path)
    return lambda: stat(path) != before


Trigger = Callable[[subprocess.Popen], Callable[[], bool]]


class KillRun:
    """Starts `evoharness evolve` (with --resume after the first start) and kills it."""

    def __init__(self, run_dir: Path, rng: random.Random) -> None:
        self.run_dir, self.rng = run_dir, rng
        self.paths = RunPaths(root=run_dir)
        self.starts = 0
        self.kills: list[tuple[str, int, str]] = []  # (trigger, iteration, unfinished phase)
        self.damaged = 0  # kills after which the store did not read back whole
        self.held: TraceStore | None = None  # the store, held open by a trigger as a reader

    def start(self) -> subprocess.Popen:
        args = ["--iterations", str(ITERATIONS)] + (["--resume"] if self.starts else [])
        self.log_path = self.run_dir.parent / f"evolve-{self.starts:02d}.log"
        self.starts += 1
        with self.log_path.open("w") as log:
            return subprocess.Popen([str(EVOHARNESS), "evolve", str(self.run_dir), *args],
                                    stdout=log, stderr=subprocess.STDOUT, start_new_session=True)

    def kill_once(self, trigger: str, when: Trigger) -> bool:
        """Start, SIGKILL the process group when `when(proc)()` holds; False if the run completed
        first."""
        proc = self.start()
        ready = when(proc)
        deadline = time.monotonic() + WAIT_SECONDS
        while not ready():
            if proc.poll() is not None:
                assert proc.returncode == 0, f"start {self.starts} failed: {self.log(-1)}"
                return False
            assert time.monotonic() < deadline, f"{trigger}: kill point never reached"
            time.sleep(0.005)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        if self.held is not None:
            self.held.close()
            self.held = None
        self.kills.append((trigger, *position(self.run_dir)))
        self.open_store()
        return True

    def open_store(self) -> None:
        """Read the whole store as a reader would; damage is counted, and the next start (which
        checks the store before changing the run) must rebuild it."""
        try:
            with TraceStore(self.paths.db, read_only=True) as store:
                store.verify()
        except StoreDamaged:
            self.damaged += 1

    def log(self, index: int) -> str:
        return sorted(self.run_dir.parent.glob("evolve-*.log"))[index].read_text()[-3000:]

    def next_kill(self) -> bool:
        """Pick a kill point for the state the run is in: a forced INGEST kill while one is in
        reach and none was hit yet (in iteration 0 by a seeded coin, from iteration 1 always); a forced TRIAL kill (seeded coin) once the run is
        about to judge a change, after one or three of the trial's rollout files; a forced REVERT
        kill once the run is at a revert (or, after REVERT_FROM kills, running on to the next
        revert); else, by a seeded coin, during start-up or after one or two more steps of
        progress."""
        iteration, phase = position(self.run_dir)
        hit = {trigger for trigger, _, phase in self.kills
               if trigger != "ingest" or phase == "INGEST"}  # a late INGEST kill is tried again
        at_revert = iteration >= 1 and phase in ("TRIAL", "REVERT")
        if "revert" not in hit and (at_revert or len(self.kills) >= REVERT_FROM):
            return self.kill_once("revert", self._revert_trigger(mid_revert_possible=at_revert))
        if "ingest" not in hit and phase == "EVAL" and (iteration >= 1 or self.rng.random() < 0.5):
            return self.kill_once("ingest", self._ingest_trigger(iteration))
        if ("trial" not in hit and phase in ("EVOLVE", "COMMIT", "TRIAL")
                and self.rng.random() < 0.5):
            steps, start = self.rng.choice((1, 3)), trial_files(self.run_dir)
            return self.kill_once(
                "trial", lambda _: lambda: trial_files(self.run_dir) >= start + steps)
        if self.rng.random() < 0.25:
            return self.kill_once("startup", self._started)
        steps = self.rng.choice((1, 2))
        start = progress(self.run_dir)
        return self.kill_once(f"progress+{steps}",
                              lambda _: lambda: progress(self.run_dir) >= start + steps)

    def _started(self, proc: subprocess.Popen) -> Callable[[], bool]:
        """Once it holds the run lock: it is checking the store, indexing, recovering git."""
        return lambda: f"(pid {proc.pid}," in (self.paths.lock.read_text()
                                                if self.paths.lock.exists() else "")

    def _revert_trigger(self, mid_revert_possible: bool) -> Trigger:
        """Mid-revert (`git revert --no-commit` has rewritten the prompt, nothing is committed:
        only when the next workspace edit is that revert) or right after the revert commit, before
        its record is written; a seeded coin picks."""
        workspace = self.run_dir / "workspace"
        if mid_revert_possible and self.rng.random() < 0.5:
            return lambda _: changed(workspace / "system_prompt.md.j2")
        reflog = workspace / ".git" / "logs" / "HEAD"
        lines = len(reflog.read_text().splitlines())
        return lambda _: lambda: any("Revert" in line
                                     for line in reflog.read_text().splitlines()[lines:])

    def _ingest_trigger(self, iteration: int) -> Trigger:
        """This process holds the store open as a reader, taken once a rollout of the evaluation
        is written while another is still to run: the loop is past its start-up check (which
        writes) and writes nothing more before it records EVAL in its file, then waits for the
        store to write EVAL's index row and INGEST (DuckDB lets no writer in beside a reader). The
        kill comes once the EVAL file is there. Only a reader taken after all the rollouts (the
        fallback when the last ones were written together) can come late; `next_kill` then tries
        again at the next evaluation."""
        expected = 3 * K * (2 if iteration == 0 else 1)  # calibrated baseline: 2k attempts
        rollouts = self.paths.rollouts(iteration)
        evaluated = self.paths.phase(iteration, "EVAL")

        def written() -> int:
            return len(list(rollouts.glob("*.json")))

        before = written()

        def ready() -> bool:
            if self.held is None:
                now = written()
                if now > before or now >= expected:
                    self.held = TraceStore(self.paths.db, read_only=True)
                return False
            return evaluated.exists()
        return lambda _: ready


@pytest.mark.slow
def test_sigkill_at_seeded_points_then_resume_completes_consistently(tmp_path: Path) -> None:
    config = RunConfig(run_id="kills", tasks=SUITE, model=agents_script(tmp_path / "agents.yaml"),
                       k=K, workers=2, rollout_timeout=60,
                       stop=StopRules(iterations=ITERATIONS))
    run_dir = init_run(tmp_path / "run", config).root
    runner = KillRun(run_dir, random.Random(SEED))
    completed = False
    while not completed and len(runner.kills) < KILLS:
        completed = not runner.next_kill()
    if not completed:
        proc = runner.start()
        assert proc.wait(timeout=WAIT_SECONDS * 2) == 0, runner.log(-1)

    print(f"{len(runner.kills)} kills (trigger, iteration, unfinished phase), "
          f"{runner.damaged} left a damaged store: {runner.kills}")
    assert len(runner.kills) >= 20, runner.kills
    assert any(t == "ingest" and p == "INGEST" for t, _, p in runner.kills), runner.kills
    assert any(t == "trial" and p == "TRIAL" for t, _, p in runner.kills), runner.kills
    assert any(t == "revert" and i >= 1 for t, i, _ in runner.kills), runner.kills
    assert_consistent(run_dir)


def assert_consistent(run_dir: Path) -> None:
    repo = git.Repo(run_dir / "workspace")
    history = set(repo.git.rev_list("HEAD").split())
    _, ledger = read_run(run_dir)
    with ledger.reading() as store:
        store.verify()
        con = store.con
        phases = con.execute("SELECT iteration, phase FROM iterations").fetchall()
        ids = [r for (r,) in con.execute("SELECT rollout_id FROM rollouts").fetchall()]
        torn = con.execute(
            "SELECT r.rollout_id, count(e.seq), min(e.seq), max(e.seq), count(DISTINCT e.seq) "
            "FROM rollouts r LEFT JOIN events e USING (rollout_id) GROUP BY r.rollout_id "
            "HAVING count(e.seq) = 0 OR min(e.seq) <> 0 OR max(e.seq) <> count(e.seq) - 1 "
            "OR count(DISTINCT e.seq) <> count(e.seq)").fetchall()
        orphans = con.execute("SELECT count(*) FROM events WHERE rollout_id NOT IN "
                              "(SELECT rollout_id FROM rollouts)").fetchone()[0]
        stored_changes = {c for (c,) in con.execute("SELECT change_id FROM changes").fetchall()}

    expected = {(it, p.value) for it in range(ITERATIONS) for p in PHASE_ORDER}
    evaluated = {repo.commit(r.harness_commit).tree.hexsha for r in ledger.phase_records()
                 if r.phase == Phase.EVAL and r.iteration < ITERATIONS}
    if repo.head.commit.tree.hexsha not in evaluated:  # else the limit skips its evaluation
        expected |= {(ITERATIONS, p.value) for p in EVALUATE}
    assert set(phases) == expected
    assert {(r.iteration, r.phase.value) for r in ledger.phase_records()} == set(phases)
    assert len(ids) == len(set(ids))
    assert torn == [] and orphans == 0, torn
    files = [p.stem for p in [*run_dir.glob("iterations/*/rollouts/*.json"),
                              *run_dir.glob("iterations/*/trials/*.json")]]
    assert sorted(files) == sorted(ids)

    records = ledger.changes()
    assert {r.id for r in records} == stored_changes
    assert len(records) == ITERATIONS  # one change per evolve session, none lost or doubled
    for r in records:
        assert repo.commit(r.entry.commit).hexsha in history, r.id
    assert [r.decision for r in records] == ["keep", "revert", "revert"]
    for r in records:
        if r.decision == "revert":
            assert r.revert.revert_commit in history, r.id
            trailers = repo.commit(r.revert.revert_commit).trailers_dict
            assert trailers["Reverts-Commit"] == [repo.commit(r.entry.commit).hexsha]
    assert repo.git.fsck("--strict", "--no-dangling") == ""
    assert not repo.is_dirty(untracked_files=True)
    # The store is exactly an index of the run's files: rebuilding it changes no table, and
    # every stored verdict is what its trial decides on the rollouts the rebuilt store holds.
    before = tables(ledger.paths.db)
    with pytest.raises(SystemExit) as exit_info:
        main(["traces", "rebuild", str(run_dir)])
    assert exit_info.value.code == 0 and tables(ledger.paths.db) == before
    with open_run(run_dir) as run:
        for r in records:
            stored = stored_rollouts(run, r.iteration)
            replayed = trial_of(r.entry, r.judgement.setup).step(outcomes(stored[r.id]))
            assert replayed.verdict == r.judgement.verdict, r.id
