"""Process faults: `evoharness evolve` over several iterations, SIGKILLed at seeded moments (and,
forced, during INGEST and during a revert), resumed after each kill until it completes; nothing is
duplicated, torn or lost: DuckDB, manifests, revert commits and the git store all agree."""
from __future__ import annotations

import os
import random
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import duckdb
import git
import pytest

from evolve.config import RunConfig, StopRules
from evolve.loop import EVALUATE, PHASE_ORDER
from evolve.run import init_run
from manifests.store import load_run_manifests
from tests.fixtures.e2e_agents import (
    EVOLVE_MARKER, HARMFUL_RULE, HELPFUL_RULE, ScriptedAgents, change, done,
)

SUITE = Path(__file__).resolve().parents[1] / "fixtures" / "e2e_suite"
TRAIN = ["write-alpha", "write-beta"]
EVOHARNESS = Path(sys.executable).parent / "evoharness"
SEED = 20240917
ITERATIONS = 3
K = 2
KILLS = 24  # kill points before the final, unkilled resume
REVERT_FROM = 12  # after this many kills, one runs on to the next revert if none was hit yet
WAIT_SECONDS = 90.0
NOTHING_JUDGED = "No change has been judged yet."  # the evolve agent's scoreboard before any verdict
MODEL_LATENCY = 0.05  # seconds per reply: a scripted iteration is otherwise over before a kill lands


# A second harmful rule: the evolve agent refuses a rule reverted earlier in the run.
OTHER_HARMFUL_RULE = "Skip every command and finish at once without looking at any file."


def harmful(system: str) -> bool:
    return HARMFUL_RULE in system or OTHER_HARMFUL_RULE in system


class Agents(ScriptedAgents):
    """The first evolve session (nothing judged yet) adds the helpful rule, which is kept; every
    later session adds a harmful rule (by iteration: a reverted one may not come back), which the
    next iteration reverts. The choice depends only on the conversation, so a killed session
    replays the same script when resumed."""

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        system = body["messages"][0]["content"]
        if EVOLVE_MARKER in system:  # evolve requests are sequential: swapping the script is safe
            helpful = NOTHING_JUDGED in system
            odd = int(re.search(r"Iteration (\d+)", body["messages"][1]["content"]).group(1)) % 2
            rule = HARMFUL_RULE if odd else OTHER_HARMFUL_RULE
            self.evolve_script = [change(HELPFUL_RULE, TRAIN) if helpful
                                  else change(rule, ["write-alpha"]), done()]
        time.sleep(MODEL_LATENCY)
        return super().__call__(body)


def position(db: Path) -> tuple[int, str]:
    """(iteration, first unfinished phase) as the DuckDB file says, read after the process died."""
    if not db.exists():
        return 0, "EVAL"
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute("SELECT iteration, phase FROM iterations").fetchall()
    if not rows:
        return 0, "EVAL"
    iteration = max(it for it, _ in rows)
    done = {phase for it, phase in rows if it == iteration}
    if done == set(PHASE_ORDER):
        return iteration + 1, "EVAL"
    return iteration, next(p for p in PHASE_ORDER if p not in done)


def stat(path: Path) -> tuple[int, int] | None:
    try:
        st = path.stat()
    except FileNotFoundError:
        return None
    return st.st_size, st.st_mtime_ns


def changed(path: Path) -> Callable[[], bool]:
    before = stat(path)
    return lambda: stat(path) != before


class KillRun:
    """Starts `evoharness evolve` (with --resume after the first start) and kills it."""

    def __init__(self, run_dir: Path, url: str, rng: random.Random) -> None:
        self.run_dir, self.url, self.rng = run_dir, url, rng
        self.starts = 0
        self.kills: list[tuple[str, int, str]] = []  # (trigger, iteration, unfinished phase)

    def start(self) -> subprocess.Popen:
        args = ["--iterations", str(ITERATIONS)] + (["--resume"] if self.starts else [])
        self.log_path = self.run_dir.parent / f"evolve-{self.starts:02d}.log"
        self.starts += 1
        with self.log_path.open("w") as log:
            return subprocess.Popen([str(EVOHARNESS), "evolve", str(self.run_dir), *args],
                                    env={**os.environ, "OLLAMA_HOST": self.url}, stdout=log,
                                    stderr=subprocess.STDOUT, start_new_session=True)

    def kill_once(self, trigger: str, ready: Callable[[], bool]) -> bool:
        """Start, SIGKILL the process group when `ready()` holds; False if the run completed first."""
        proc = self.start()
        deadline = time.monotonic() + WAIT_SECONDS
        while not ready():
            if proc.poll() is not None:
                assert proc.returncode == 0, f"start {self.starts} failed: {self.log(-1)}"
                return False
            assert time.monotonic() < deadline, f"{trigger}: kill point never reached"
            time.sleep(0.002)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        self.kills.append((trigger, *position(self.run_dir / "traces.duckdb")))
        return True

    def log(self, index: int) -> str:
        return sorted(self.run_dir.parent.glob("evolve-*.log"))[index].read_text()[-3000:]

    def next_kill(self) -> bool:
        """Pick a kill point for the state the run is in: a forced INGEST kill (seeded coin) while
        one is in reach and none was hit yet; a forced REVERT kill once the run is at a revert (or,
        after REVERT_FROM kills, running on to the next revert); else a seeded short delay."""
        iteration, phase = position(self.run_dir / "traces.duckdb")
        hit = {p for _, _, p in self.kills}
        at_revert = iteration >= 2 and phase in EVALUATE[:4]
        if "REVERT" not in hit and (at_revert or len(self.kills) >= REVERT_FROM):
            return self.kill_once("revert", self._revert_trigger(mid_revert_possible=at_revert))
        if "INGEST" not in hit and phase == "EVAL" and self.rng.random() < 0.5:
            return self.kill_once("ingest", self._ingest_trigger(iteration))
        if self.rng.random() < 0.25:  # while it starts: imports, opening DuckDB, recovering git
            at = time.monotonic() + self.rng.uniform(0.05, 0.8)
            return self.kill_once("startup", lambda: time.monotonic() >= at)
        # The last iteration is short: kills land sooner there, so they spread over the whole run.
        longest = 0.6 if iteration < ITERATIONS else 0.25
        return self.kill_once("delay", self._after_first_output(self.rng.uniform(0.0, longest)))

    def _revert_trigger(self, mid_revert_possible: bool) -> Callable[[], bool]:
        """Mid-revert (`git revert --no-commit` has rewritten the prompt, nothing is committed:
        only when the next workspace edit is that revert) or right after the revert commit, before
        the verdict records it; a seeded coin picks."""
        workspace = self.run_dir / "workspace"
        if mid_revert_possible and self.rng.random() < 0.5:
            return changed(workspace / "system_prompt.md.j2")
        reflog = workspace / ".git" / "logs" / "HEAD"
        lines = len(reflog.read_text().splitlines())
        return lambda: any("Revert" in line for line in reflog.read_text().splitlines()[lines:])

    def _after_first_output(self, delay: float) -> Callable[[], bool]:
        """`delay` seconds after the process printed its first line (it is past its start-up, whose
        length depends on the machine's load): short, so each kill lets the run progress a little."""
        state: dict[str, float] = {}

        def ready() -> bool:
            if "at" not in state and self.log_path.stat().st_size:
                state["at"] = time.monotonic() + delay
            return time.monotonic() >= state.get("at", float("inf"))
        return ready

    def _ingest_trigger(self, iteration: int) -> Callable[[], bool]:
        """The first write to DuckDB's WAL once every rollout file of the evaluation exists: EVAL
        being marked done, so INGEST is starting (or its transaction is in flight)."""
        expected = 3 * K * (2 if iteration == 0 else 1)  # calibrated baseline: 2k attempts
        rollouts = self.run_dir / "iterations" / f"it{iteration:03d}" / "rollouts"
        wal = self.run_dir / "traces.duckdb.wal"
        state: dict[str, Any] = {}

        def ready() -> bool:
            if "wal" not in state:
                if len(list(rollouts.glob("*.json"))) >= expected:
                    state["wal"] = stat(wal)
                return False
            return stat(wal) != state["wal"]
        return ready


def test_sigkill_at_seeded_points_then_resume_completes_consistently(tmp_path: Path) -> None:
    config = RunConfig(run_id="kills", tasks=SUITE, model="ollama:scripted", k=K, workers=2,
                       rollout_timeout=60, extra_rollouts=0,
                       stop=StopRules(iterations=ITERATIONS))
    run_dir = init_run(tmp_path / "run", config).root
    agents = Agents(solves=lambda system: HELPFUL_RULE in system and not harmful(system),
                    evolve_script=[])
    runner = KillRun(run_dir, "", random.Random(SEED))
    with agents.server() as server:
        runner.url = server.url
        completed = False
        while not completed and len(runner.kills) < KILLS:
            completed = not runner.next_kill()
        if not completed:
            proc = runner.start()
            assert proc.wait(timeout=WAIT_SECONDS * 2) == 0, runner.log(-1)

    phases_hit = {phase for _, _, phase in runner.kills}
    print(f"{len(runner.kills)} kills (trigger, iteration, unfinished phase): {runner.kills}")
    assert len(runner.kills) >= 20, runner.kills
    assert {"INGEST", "REVERT"} <= phases_hit, runner.kills
    assert_consistent(run_dir)


def assert_consistent(run_dir: Path) -> None:
    repo = git.Repo(run_dir / "workspace")
    history = set(repo.git.rev_list("HEAD").split())
    with duckdb.connect(str(run_dir / "traces.duckdb"), read_only=True) as con:
        phases = con.execute("SELECT iteration, phase FROM iterations").fetchall()
        ids = [r for (r,) in con.execute("SELECT rollout_id FROM rollouts").fetchall()]
        torn = con.execute(
            "SELECT r.rollout_id, count(e.seq), min(e.seq), max(e.seq), count(DISTINCT e.seq) "
            "FROM rollouts r LEFT JOIN events e USING (rollout_id) GROUP BY r.rollout_id "
            "HAVING count(e.seq) = 0 OR min(e.seq) <> 0 OR max(e.seq) <> count(e.seq) - 1 "
            "OR count(DISTINCT e.seq) <> count(e.seq)").fetchall()
        orphans = con.execute("SELECT count(*) FROM events WHERE rollout_id NOT IN "
                              "(SELECT rollout_id FROM rollouts)").fetchone()[0]
        verdicts = {c: (d, rc) for c, d, rc in con.execute(
            "SELECT change_id, decision, revert_commit FROM verdicts").fetchall()}
        stored_changes = {c for (c,) in con.execute("SELECT change_id FROM changes").fetchall()}

    expected = {(it, p) for it in range(ITERATIONS) for p in PHASE_ORDER}
    assert set(phases) == expected | {(ITERATIONS, p) for p in EVALUATE}
    assert len(ids) == len(set(ids))
    assert torn == [] and orphans == 0, torn
    files = [p.stem for p in run_dir.glob("iterations/*/rollouts/*.json")]
    assert sorted(files) == sorted(ids)

    changes = [c for m in load_run_manifests(run_dir) for c in m.changes]
    assert {c.id for c in changes} == stored_changes
    assert len(changes) == ITERATIONS  # one change per evolve session, none lost or doubled
    for c in changes:
        assert repo.commit(c.commit).hexsha in history, c
    decisions = [verdicts[c.id][0] for c in changes]
    assert decisions == ["keep", "revert", "revert"], decisions
    for c in changes:
        decision, revert_commit = verdicts[c.id]
        if decision == "revert":
            assert revert_commit in history, c
            trailers = repo.commit(revert_commit).trailers_dict
            assert trailers["Reverts-Commit"] == [repo.commit(c.commit).hexsha]
    assert repo.git.fsck("--strict", "--no-dangling") == ""
    assert not repo.is_dirty(untracked_files=True)


@pytest.fixture(autouse=True)
def _no_stray_host(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OLLAMA_HOST", raising=False)
