"""The verifier: after the agent is done, run the task's tests/test.sh as a user the agent never
was, over the agent's /app ("shared", Harbor's default) or over a fresh copy of the task with only
the declared artifacts ("separate"), and read the reward file. Only the reward file decides;
test output is kept for evidence, never parsed. How the reward file is read is reward.py's.
Files the agent left that the host cannot hand over or copy fail the rollout (reward 0, with the
reason), as any other way of not solving the task: they are never the infrastructure's fault."""
from __future__ import annotations

import os
import shutil
import tarfile
import tempfile
from pathlib import Path, PurePosixPath

from pydantic import BaseModel, ConfigDict

from evoharness.tasks.sandbox.host_files import UnusableFiles, remove_tree
from evoharness.tasks.reward import read_reward
from evoharness.tasks.sandbox.bwrap import Mount
from evoharness.tasks.sandbox.protocol import Sandbox
from evoharness.tasks.task import Task

TAIL_LINES = 40
MAX_HOPS = 40  # the kernel's limit on links followed in one lookup (MAXSYMLINKS)
NOT_RUN = "not_run"  # the verifier's exit reason when the agent's files could not be handed over
# What the verifier's interpreter gets beside the task's own verifier.env: no directory the agent
# wrote (the working directory /app) on sys.path, no bytecode left behind, no user site-packages.
VERIFIER_ENV = {"PYTHONSAFEPATH": "1", "PYTHONDONTWRITEBYTECODE": "1", "PYTHONNOUSERSITE": "1"}


class VerifierResult(BaseModel):
    model_config = ConfigDict(frozen=True)

    reward: float
    passed: bool
    output_tail: str  # last lines of test.sh's output (failing assertions), plus why if no reward
    exit_reason: str = "exited"
    duration_s: float = 0.0


def _tail(text: str, lines: int = TAIL_LINES) -> str:
    return "\n".join(text.rstrip().splitlines()[-lines:])


def _keep_safe(member: tarfile.TarInfo, dest: str, refused: list[str],
               links: list[str]) -> tarfile.TarInfo | None:
    try:
        kept = tarfile.data_filter(member, dest)
    except tarfile.FilterError:
        refused.append(member.name)
        return None
    if kept is not None and (kept.issym() or kept.islnk()):  # a hard link may name a symlink
        links.append(kept.name)
    return kept


def copy_artifacts(agent_app: Path, fresh_app: Path, paths: list[str]) -> list[str]:
    """Copy each artifact (a path relative to /app) from the agent's /app over a fresh one as
    Harbor does: a directory artifact replaces the directory, and everything goes through a tar
    read with the 'data' filter, so special files (FIFOs, devices) and set-id bits never cross
    over. Then every link that crossed is followed in the final tree, as the verifier's lookups
    will, and removed if it leads out of /app (tar's filter checks each link against the tree as
    far as it is extracted: `a -> z/../../x` passes it before `z -> .` arrives). Returns what was
    refused. UnusableFiles when the agent's files cannot be archived or extracted."""
    refused: list[str] = []
    links: list[str] = []
    try:
        with tempfile.TemporaryFile() as buffer:  # as large as /app may be: the disk cap bounds it
            with tarfile.open(fileobj=buffer, mode="w") as archive:
                for rel in paths:
                    source = _within(agent_app, rel)
                    if source is None:
                        refused.append(rel)
                    elif source.is_symlink() or source.exists():
                        archive.add(source, arcname=rel, recursive=True)  # links are not followed
                        _clear(fresh_app / rel)
            buffer.seek(0)
            with tarfile.open(fileobj=buffer, mode="r") as archive:
                archive.extractall(fresh_app,
                                   filter=lambda m, d: _keep_safe(m, d, refused, links))
    except (OSError, RecursionError, tarfile.TarError) as error:
        raise UnusableFiles(f"the artifacts could not be copied: {type(error).__name__}: "
                            f"{str(error)[:300]}") from None
    return refused + drop_escaping_links(fresh_app, links)


def drop_escaping_links(app: Path, names: list[str]) -> list[str]:
    """Remove each of `names` (relative to `app`) that is a link leading out of `app` when
    followed in the tree as it now stands; again until none does (a removed link can change
    where another leads). Returns the ones removed."""
    removed: list[str] = []
    while bad := [n for n in names if n not in removed and os.path.islink(app / n)
                  and _escapes(app, n)]:
        for name in bad:
            (app / name).unlink()
        removed += bad
    return removed


def _escapes(app: Path, name: str) -> bool:
    """Whether the link `name` leads out of `app` (the sandbox's /app) at any step of its lookup:
    '..' above /app, an absolute target outside it, or more than MAX_HOPS links. A component
    that does not exist is taken as a directory (as tar's filter does), so a link that would
    escape once it exists counts as escaping."""
    hops = 0

    def follow(where: list[str], target: str) -> list[str] | None:  # None: it left /app
        nonlocal hops
        hops += 1
        parts = list(PurePosixPath(target).parts)
        if hops > MAX_HOPS or parts[:1] == ["/"] and parts[1:2] != ["app"]:
            return None
        if parts[:1] == ["/"]:
            where, parts = [], parts[2:]
        for part in parts:
            if part == "..":
                if not where:
                    return None
                where = where[:-1]
            elif part != ".":
                where = [*where, part]
                if os.path.islink(app.joinpath(*where)):
                    where = follow(where[:-1], os.readlink(app.joinpath(*where)))
                    if where is None:
                        return None
        return where

    return follow(list(PurePosixPath(name).parent.parts),
                  os.readlink(app / name)) is None


def _clear(path: Path) -> None:
    """Make room for an artifact as Harbor does: a directory is emptied (its task files do not
    come back), a file replaced."""
    if path.is_dir() and not path.is_symlink():
        for child in path.iterdir():
            if child.is_dir() and not child.is_symlink():
                shutil.rmtree(child)
            else:
                child.unlink()
    elif path.is_symlink() or path.exists():
        path.unlink()


def _within(app: Path, rel: str) -> Path | None:
    """app/rel, or None when a directory on the way is a link (the agent's /app/out -> / would
    otherwise make the host read its own /etc)."""
    path = app
    for part in Path(rel).parts[:-1]:
        path = path / part
        if path.is_symlink():
            return None
    return app / rel


def verifier_sandbox(task: Task, sandbox: Sandbox) -> tuple[Sandbox, str]:
    """The sandbox the tests run in, as a new user (the agent's processes are killed first), and a
    note on artifacts refused. Shared: the agent's /app itself. Separate: a fresh /app."""
    if task.config.verifier.environment_mode == "shared":
        return sandbox.handover(sandbox.app_dir), ""
    sandbox.kill_leftovers()
    fresh = sandbox.fresh_copy(task)
    try:
        refused = copy_artifacts(sandbox.app_dir, fresh, task.config.artifact_paths)
        judge = sandbox.handover(fresh)
    except BaseException:
        remove_tree(fresh)
        raise
    note = f"[{len(refused)} artifact entries refused (special files or links leaving /app)]" \
        if refused else ""
    return judge, note


def verify(task: Task, sandbox: Sandbox) -> VerifierResult:
    """Run tests/test.sh (tests at /tests, writable /logs/verifier) within the verifier timeout.
    A timeout or a missing or unreadable reward file is a fail with reward 0. Nothing the agent
    started can interfere: its processes are gone and the tests run as another user. Files the
    agent left that cannot be handed over fail it too, with reward 0 and the reason."""
    try:
        judge, note = verifier_sandbox(task, sandbox)
    except UnusableFiles as error:
        return VerifierResult(reward=0.0, passed=False, exit_reason=NOT_RUN,
                              output_tail=f"[the verifier did not run: {error}]")
    logs = judge.writable_dir("logs")
    try:
        mounts = [Mount(source=task.tests_dir, dest="/tests"),
                  Mount(source=logs, dest="/logs/verifier", writable=True)]
        run = judge.run(["bash", "/tests/test.sh"], mounts=mounts,
                        env={**VERIFIER_ENV, **task.config.verifier.env},
                        timeout=task.config.verifier.timeout_sec)
        judge.kill_leftovers()
        reward, problem = read_reward(logs)
    finally:
        shutil.rmtree(logs, ignore_errors=True)
        judge.close()
    if run.timed_out:
        reward, problem = None, f"verifier timed out after {task.config.verifier.timeout_sec}s"
    tail = _tail(run.output) + "".join(f"\n[{p}]" for p in (problem,) if p) + \
        (f"\n{note}" if note else "")
    value = reward if reward is not None else 0.0
    return VerifierResult(reward=value, passed=value >= task.config.verifier.pass_reward,
                          output_tail=tail, exit_reason=run.exit_reason,
                          duration_s=run.duration_ms / 1000)
